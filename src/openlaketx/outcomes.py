"""The one vocabulary of outcomes, said alike by the CLI, the API and the dashboard.

A job run, a dataset attempt and a task of a run each end in one of these words, and each word
has one look (a badge class and a mark on the pages, a colour in the terminal). The tables keep
the words they were written with (`pipeline_runs.status` says BLOCKED, `run_history.status`
SUCCESS); `outcome_of` is the one place that maps a stored word to the word shown.

A rule's severity and its result on a batch (PASS, WARN, FAIL) are another axis: what one rule
said, not how a run ended. They never wear an outcome's badge (`RULE_LOOKS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class RunOutcome(StrEnum):
    """How a job run, a dataset attempt or a task of a run ended (or where it is)."""

    PROMOTED = "PROMOTED"  # a new approved version (a run: every task did its part)
    HELD = "HELD"  # the gate blocked the batch: nothing published, the approved data as it was
    FAILED = "FAILED"  # an error stopped it
    SKIPPED = "SKIPPED"  # a task not attempted: a task it depends on did not succeed
    NOTHING_NEW = "NOTHING-NEW"  # an attempt that found nothing new to promote
    RUNNING = "RUNNING"
    PENDING = "PENDING"  # accepted, not started yet
    DONE = "DONE"  # one phase of an attempt (read, validate, write) that ended without error


@dataclass(frozen=True, slots=True)
class Look:
    badge: str  # the CSS class of its badge on the pages
    mark: str  # the mark beside the word (never colour alone)
    colour: str  # its colour in the terminal (rich)


LOOKS: Mapping[RunOutcome, Look] = {
    RunOutcome.PROMOTED: Look("o-ok", "✓", "green"),
    RunOutcome.HELD: Look("o-held", "‖", "yellow"),
    RunOutcome.FAILED: Look("o-failed", "✕", "red"),
    RunOutcome.SKIPPED: Look("o-skipped", "↷", "magenta"),
    RunOutcome.NOTHING_NEW: Look("o-nothing-new", "∅", "cyan"),
    RunOutcome.RUNNING: Look("o-running", "↻", "blue"),
    RunOutcome.PENDING: Look("o-pending", "…", "blue"),
    RunOutcome.DONE: Look("o-done", "•", "dim"),
}

# A rule's severity and result: one class each, none of them an outcome's badge.
RULE_LOOKS: Mapping[str, str] = {
    "PASS": "r-pass",
    "WARN": "r-warn",
    "WARNING": "r-warn",
    "FAIL": "r-fail",
    "ALERT": "r-warn",
    "BLOCK": "r-fail",
}

# The one map from a word stored in the tables to the word shown.
STORED: Mapping[str, RunOutcome] = {
    "SUCCESS": RunOutcome.PROMOTED,  # run_history
    "COMPLETED": RunOutcome.PROMOTED,  # pipeline_runs, run_events
    "BLOCKED": RunOutcome.HELD,  # pipeline_runs, run_history, step_logs (the gate step)
    "FAILED": RunOutcome.FAILED,
    "SKIPPED": RunOutcome.SKIPPED,
    "RUNNING": RunOutcome.RUNNING,
    "PENDING": RunOutcome.PENDING,
    "NOTHING-NEW": RunOutcome.NOTHING_NEW,
    "PROMOTED": RunOutcome.PROMOTED,
    "HELD": RunOutcome.HELD,
    "DONE": RunOutcome.DONE,
}

# What a page's filter word asks of `pipeline_runs.status` (a run in flight has no row there).
STORED_RUN_STATUS: Mapping[RunOutcome, str] = {
    RunOutcome.PROMOTED: "COMPLETED",
    RunOutcome.HELD: "BLOCKED",
    RunOutcome.FAILED: "FAILED",
}


def outcome_of(status: Any) -> RunOutcome | None:
    """The word shown for a stored status (None for none; a word not known stays as it is:
    no badge of an outcome is lent to it)."""
    if status is None:
        return None
    return STORED.get(str(status).upper())


def word_of(status: Any) -> str | None:
    """The word shown for a stored status, as text (an unknown word as stored)."""
    if status is None:
        return None
    found = outcome_of(status)
    return str(found) if found is not None else str(status)


def attempt_outcome(status: Any, data_version: int | None, rows_written: int | None) -> str:
    """A dataset attempt's word: a SUCCESS that wrote nothing and made no version found
    nothing new; else as its status says."""
    if str(status) == "SUCCESS" and data_version is None and not rows_written:
        return str(RunOutcome.NOTHING_NEW)
    return word_of(status) or ""


def step_outcome(status: Any) -> str:
    """A phase's word: the gate step's BLOCKED is HELD, a phase that ended is DONE."""
    if str(status) == "COMPLETED":
        return str(RunOutcome.DONE)
    return word_of(status) or ""


def look_of(word: Any) -> Look | None:
    """The look of an outcome word (None: not an outcome)."""
    found = outcome_of(word)
    return None if found is None else LOOKS[found]
