"""One outcome vocabulary (openlaketx/outcomes.py): each word one look, a stored word shown as
its outcome, and a rule's PASS, WARN or FAIL never in an outcome's badge."""

from __future__ import annotations

import re
from pathlib import Path

from openlaketx import outcomes
from openlaketx.service.dashboard import pages
from openlaketx.service.dashboard.state import _environment


def test_every_outcome_word_has_exactly_one_style_and_rules_wear_none() -> None:
    assert set(outcomes.LOOKS) == set(outcomes.RunOutcome)
    badges = [look.badge for look in outcomes.LOOKS.values()]
    marks = [look.mark for look in outcomes.LOOKS.values()]
    assert len(set(badges)) == len(badges) and len(set(marks)) == len(marks)
    css = (Path(pages.__file__).parent / "static" / "dash.css").read_text()
    for badge in badges:
        assert re.search(rf"^\.{badge} \{{", css, re.M), badge  # each has its one rule
    # every stored word lands on one outcome; a rule's words are not among them
    for stored in ("SUCCESS", "COMPLETED", "BLOCKED", "FAILED", "SKIPPED", "RUNNING", "PENDING"):
        assert outcomes.outcome_of(stored) in outcomes.LOOKS
    for rule_word in ("PASS", "WARN", "FAIL", "WARNING"):
        assert outcomes.outcome_of(rule_word) is None and outcomes.look_of(rule_word) is None
        assert outcomes.RULE_LOOKS[rule_word] not in badges
    macros = _environment().get_template("macros.html").module
    assert 'class="outcome o-held"' in str(macros.outcome("BLOCKED"))  # type: ignore[attr-defined]
    assert "o-held" not in str(macros.outcome("WARN"))  # type: ignore[attr-defined]
    warn = str(macros.rule("WARN"))  # type: ignore[attr-defined]
    assert "outcome" not in warn and "o-held" not in warn and "r-warn" in warn
    assert 'class="outcome o-none"' in str(macros.outcome("WARN"))  # type: ignore[attr-defined]


def test_a_stored_word_is_shown_as_its_outcome_in_one_place() -> None:
    # a run: COMPLETED, BLOCKED, FAILED as stored in pipeline_runs
    assert [outcomes.word_of(s) for s in ("COMPLETED", "BLOCKED", "FAILED", "PENDING")] == [
        "PROMOTED",
        "HELD",
        "FAILED",
        "PENDING",
    ]
    # an attempt: a SUCCESS that made no version and wrote nothing found nothing new
    assert outcomes.attempt_outcome("SUCCESS", 3, 10) == "PROMOTED"
    assert outcomes.attempt_outcome("SUCCESS", 3, 0) == "PROMOTED"  # an empty version is one
    assert outcomes.attempt_outcome("SUCCESS", None, 0) == "NOTHING-NEW"
    assert outcomes.attempt_outcome("SUCCESS", None, None) == "NOTHING-NEW"
    assert outcomes.attempt_outcome("BLOCKED", None, 0) == "HELD"
    assert outcomes.attempt_outcome("FAILED", None, None) == "FAILED"
    # a phase: the gate's BLOCKED is HELD, a phase that ended is DONE, never PROMOTED
    assert outcomes.step_outcome("BLOCKED") == "HELD"
    assert outcomes.step_outcome("COMPLETED") == "DONE"
    assert outcomes.step_outcome("SKIPPED") == "SKIPPED"
    # a word that is no outcome keeps its own text and gets no outcome's look
    assert outcomes.word_of("SOMETHING") == "SOMETHING" and outcomes.look_of("SOMETHING") is None
    assert outcomes.word_of(None) is None


def test_the_cli_colours_each_outcome_as_its_look_says() -> None:
    from openlaketx import render

    for word, look in outcomes.LOOKS.items():
        assert render.status_text(str(word)).style == look.colour, word
    assert render.status_text("BLOCKED").style == outcomes.LOOKS[outcomes.RunOutcome.HELD].colour
