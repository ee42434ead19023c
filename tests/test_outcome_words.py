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
