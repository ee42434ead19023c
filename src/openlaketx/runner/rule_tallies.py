"""Each row-level rule's failures and samples in a staged batch, from its files' footers.

A rule's flag column is null exactly where a row passes, so a file's failures are its rows
minus the column's null count, and the column's min and max are two samples. Nothing is read
but the footers, whatever share of rows fail; a file whose footer lacks a figure (a writer that
kept no statistics) has that one column read instead. The counts are exact under task retries:
only the attempt a Spark task committed leaves a file.
"""

from __future__ import annotations

import pyarrow.compute as pc

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.evaluate import RuleTally, row_rules
from lakeguard.words.errors import LakeTxError
from lakeguard.words.vocabulary import rule_flag
from openlaketx import storage
from openlaketx.loads.footers import FileFooter


def rule_tallies(files: list[FileFooter], rules: list[CompiledRule]) -> dict[int, RuleTally]:
    """The tally of each row-level rule that any row broke, by flag index."""
    tallies = {}
    for i, _ in enumerate(row_rules(rules)):
        tally = _tally(files, rule_flag(i))
        if tally.failed:
            tallies[i] = tally
    return tallies


def _tally(files: list[FileFooter], column: str) -> RuleTally:
    failed = 0
    low: str | None = None
    high: str | None = None
    for file in files:
        summary = file.columns.get(column)
        if summary is None:
            raise LakeTxError(
                f"staged file has no rule flag column {column}",
                where=file.path,
                fix="run again: a staged batch is written afresh by each run",
            )
        if summary.null_count is None:
            n, lo, hi = _read(file.path, column)
        else:
            n, lo, hi = file.num_records - summary.null_count, summary.min, summary.max
            if n and not summary.bounded:
                _, lo, hi = _read(file.path, column)
        failed += n
        if n and lo is not None and hi is not None:
            low = lo if low is None else min(low, lo)
            high = hi if high is None else max(high, hi)
    return RuleTally(failed, low, high)


def _read(path: str, column: str) -> tuple[int, str | None, str | None]:
    """(non-null values, min, max) of one column of one file: the bounded read a footer
    without statistics needs."""
    values = storage.read_parquet(path, [column]).column(column)
    bounds = pc.min_max(values)
    return (
        len(values) - values.null_count,
        bounds["min"].as_py(),
        bounds["max"].as_py(),
    )
