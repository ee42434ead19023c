"""The store written before stores had a version (tests/fixtures/store_v0), for the migration
tests: a copy of it, locally or on the object store, its rows, and what a migrated store is
like; and a `laketx migrate` killed at a chosen step of its table rewrite."""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lakeguard.records.audit import AuditData, audit
from lakeguard.records.commits import history
from lakeguard.records.table_defs import table_def
from lakeguard.records.versioning import MARK_STEP, MIGRATING_PROPERTY, STORE_VERSION, table_version
from lakeguard.store import MetadataStore, deltars, table_replace
from lakeguard.store.arrow import to_arrow, to_rows

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "store_v0"
STORE = FIXTURE / "metadata" / "lakeguard"
RUNS = 5  # pipeline_runs rows in the fixture


def upload(server: Any, prefix: str) -> str:
    """Copy the fixture's store to `<prefix>/lakeguard` on the server; returns that root.

    One PUT per file, several at once (Arrow's `copy_files` took ~4 s for its 58 files)."""
    target = f"{prefix}/lakeguard"
    fs = server.filesystem()
    files = [p for p in STORE.rglob("*") if p.is_file()]

    def put(path: Path) -> None:
        key = f"{target.removeprefix('s3://')}/{path.relative_to(STORE).as_posix()}"
        with fs.open_output_stream(key) as out:
            out.write(path.read_bytes())

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(put, files))
    return target


Rows = dict[str, list[dict[str, object]]]


def _read_each(store: MetadataStore) -> tuple[Rows, dict[str, int]]:
    """Each existing table's rows (every tenant, in a stable order, without the renamed
    column's name) and its store version, from one read of each table."""

    def read(table: str) -> tuple[list[dict[str, object]], int] | None:
        location = store.location(table)
        if not deltars.is_table(location):
            return None
        dt = deltars.load(table, location)
        rows = [
            {("trigger_by" if k == "triggered_by" else k): v for k, v in r.items()}
            for r in to_rows(deltars.scan(dt))
        ]
        return sorted(rows, key=repr), table_version(dt.metadata().configuration)

    with ThreadPoolExecutor(max_workers=8) as pool:  # on the object store: round trips
        found = dict(zip(store.tables(), pool.map(read, store.tables()), strict=True))
    present = {t: got for t, got in found.items() if got is not None}
    return {t: rows for t, (rows, _) in present.items()}, {t: v for t, (_, v) in present.items()}


def as_before(after: Rows, before: Rows) -> Rows:
    """`after`'s tables that `before` has, without the nullable columns a later release added
    (an opened store gains them, empty: `ensure` adds new nullable columns)."""
    kept: Rows = {}
    for table, rows in after.items():
        if table not in before:
            continue
        known = {k for r in before[table] for k in r} or None
        kept[table] = [
            {k: v for k, v in r.items() if known is None or k in known or v is not None}
            for r in rows
        ]
    return kept


def every_row(store: MetadataStore) -> Rows:
    """Each table's rows (every tenant), in a stable order, without the renamed column's name."""
    return _read_each(store)[0]


@functools.cache
def _fixture_rows() -> Rows:
    return every_row(MetadataStore("lakeguard", str(STORE), "default"))


def fixture_rows() -> Rows:
    """`every_row` of the fixture's store itself (read once per process): what a copy of it
    holds before it is migrated, on the object store too, without reading the copy back."""
    return copy.deepcopy(_fixture_rows())


def assert_migrated(store: MetadataStore, before: Rows) -> None:
    """Every row kept once, every table at this code's version, pipeline_runs rewritten once
    into its definition (generated partition column and append-only lock included), and the
    store opens and takes a new run row."""
    after, versions = _read_each(store)  # (one read of each table: on S3, round trips)
    assert as_before(after, before) == before
    assert versions == dict.fromkeys(store.tables(), STORE_VERSION)
    store.ensure()
    location = store.location("pipeline_runs")
    dt = deltars.load("pipeline_runs", location)
    config = dt.metadata().configuration
    assert config.get("delta.appendOnly") == "true" and not config.get(MIGRATING_PROPERTY)
    assert dt.metadata().partition_columns == []  # store migration 3
    fields = {f["name"]: f for f in json.loads(dt.schema().to_json())["fields"]}
    assert "triggered_by" not in fields and "trigger_by" in fields
    assert fields["run_date"]["metadata"]["delta.generationExpression"] == (
        "CAST(start_time AS DATE)"
    )
    steps = [c.get(MARK_STEP) for c in dt.history()]
    # rewritten once, however often it was interrupted (a replace restored away does not count)
    assert steps.count("replace") - steps.count("restore") == 1
    # `laketx verify` takes the marked rewrite of an append-only table for the migration it is
    properties: Mapping[str, str | None] = dict(config)
    append_only = {"pipeline_runs": (history(location), properties)}
    audit_data = AuditData(
        events=[],
        attempts=[],
        job_runs=[],
        versions=[],
        decisions=[],
        datasets={},
        commits={},
        append_only=append_only,
    )
    assert audit(audit_data, lambda _worker: False) == []
    row = {k: v for k, v in store.rows("pipeline_runs")[0].items() if k != "run_date"}
    row["pipeline_logging_id"] = "after-migration"
    deltars.append("pipeline_runs", location, to_arrow(table_def("pipeline_runs"), [row]))
    added = store.rows("pipeline_runs", filters=[("pipeline_logging_id", "=", "after-migration")])
    assert [r["run_date"] for r in added] == [row["start_time"].date()]
    assert len(store.rows("pipeline_runs")) == RUNS + 1


# Where the rewrite of pipeline_runs stops: before its replacing commit, between that commit
# and the end commit, and after the end commit (before the table is stamped with its version).
STEPS = ("before_replace", "before_end", "after_end")


class Interrupted(Exception):
    """Raised in-process at a chosen step, as a crash would stop the rewrite there."""


def interrupt_at(monkeypatch: Any, point: str) -> None:
    """Make the next rewrite raise `Interrupted` at `point` (one of `STEPS`)."""
    import lakeguard.store.rewrite as rewrite

    real_end = rewrite.end

    def stop(*_a: Any, **_k: Any) -> None:
        raise Interrupted(point)

    def end_then_stop(*a: Any, **k: Any) -> None:
        real_end(*a, **k)
        raise Interrupted(point)

    if point == "before_replace":
        monkeypatch.setattr(table_replace, "replace_all", stop)
    elif point == "before_end":
        monkeypatch.setattr(rewrite, "end", stop)
    else:
        monkeypatch.setattr(rewrite, "end", end_then_stop)


def interrupted_then_refused(store: MetadataStore, point: str, monkeypatch: Any) -> None:
    """Interrupt a `migrate` of `store` at `point`; a store opened afresh then refuses to
    open until the next `laketx migrate`."""
    import pytest

    from lakeguard.records.versioning import StoreVersionError
    from lakeguard.store.migrations import migrate

    with monkeypatch.context() as patched:
        interrupt_at(patched, point)
        with pytest.raises(Interrupted):
            migrate(store)
    refusal = "interrupted" if point != "after_end" else "laketx migrate"
    with pytest.raises(StoreVersionError, match=refusal):
        MetadataStore(store.namespace, store.root, store.tenant).ensure()


CHILD = """
import os, sys
import lakeguard.store.rewrite as rewrite
from lakeguard.store import table_replace
from openlaketx.cli import app

def die(*_a, **_k):
    os._exit(137)

home, point = sys.argv[1:3]
real_end = rewrite.end
if point == "before_replace":
    table_replace.replace_all = die
elif point == "before_end":
    rewrite.end = die
elif point == "after_end":
    def end_then_die(*a, **k):
        real_end(*a, **k)
        die()
    rewrite.end = end_then_die
else:
    raise SystemExit(f"unknown step {point}")
app(["--home", home, "migrate"])
"""


def kill_during_migrate(home: Path, point: str) -> None:
    """`laketx migrate` in a child process that dies (os._exit, no clean-up) at `point`; the
    metadata home comes from the environment the child inherits."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), point],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert child.returncode == 137, child.stdout[-2000:] + child.stderr[-3000:]
