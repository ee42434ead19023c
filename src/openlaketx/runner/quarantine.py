"""A dataset's quarantine table kept to each held batch once (lakeguard.records.quarantine):
the held batches a later attempt held again, or promoted, leave the table in one commit that
says so.

Run after every judged attempt (the run's lease held), by `laketx migrate` for the tables
written before, and read by the dashboard and `verify`. delta-rs only: no Spark. The files
removed stay on disk for Delta's time travel until a VACUUM.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pyarrow as pa
from deltalake import CommitProperties
from deltalake.transaction import AddAction, RemoveAction

from lakeguard.reads.reader import StoreReader
from lakeguard.records.quarantine import BATCH, HeldPart, Hold, HoldState, Judged, plan, unwanted
from openlaketx import storage
from openlaketx.tables import dataset_location, quarantine_name

# `run-<attempt>-batch/…` (held whole) or `run-<attempt>-malformed/…` (set aside): publish.py
_FOLDER = re.compile(r"^run-(?P<run>[0-9a-f]+)-(?P<part>batch|malformed)(?:/|$)")
MARKER = "laketx_quarantine"  # the key of a quarantine commit's userMetadata


@dataclass(frozen=True)
class QuarantineState:
    """A quarantine table's parts, what the plan says of each held batch, and the parts it
    removed (or, when not applied, would remove)."""

    parts: list[HeldPart]
    holds: dict[str, Hold]
    removed: list[HeldPart]

    def counted(self) -> list[HeldPart]:
        """The parts whose rows count: set-aside parts, and batches still held."""
        gone = {(p.run_id, p.part) for p in self.removed}
        return [p for p in self.parts if (p.run_id, p.part) not in gone]

    def said(self) -> list[str]:
        """What the removal did, one line per batch."""
        return [
            f"run {p.run_id}: {p.rows} rows {holds_word(self.holds[p.run_id])}"
            for p in self.removed
        ]


def holds_word(hold: Hold) -> str:
    word = "released by promotion" if hold.state == HoldState.RELEASED else "held again"
    return f"{word} in run {hold.by}"


def held_parts(location: str) -> list[HeldPart]:
    """Each attempt's part of the quarantine table at `location` (none: no table yet)."""
    if not storage.is_delta_table(location):
        return []
    actions = pa.table(storage.delta_table(location).get_add_actions(flatten=True))
    found: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for path, rows in zip(
        actions.column("path").to_pylist(), actions.column("num_records").to_pylist(), strict=True
    ):
        match = _FOLDER.match(path)
        if match is None:  # a file laketx did not put there: neither counted away nor removed
            continue
        key = (match["run"], match["part"])
        count, files = found.get(key, (0, []))
        found[key] = (count + int(rows or 0), [*files, path])
    return [
        HeldPart(run_id=run, part=part, rows=rows, files=tuple(files))
        for (run, part), (rows, files) in sorted(found.items())
    ]


def settle(
    location: str,
    judgments: Callable[[list[str]], list[Judged]],
    *,
    apply: bool = True,
) -> QuarantineState:
    """The quarantine at `location` with its superseded and released batches removed (unless
    `apply` is False: then only said). `judgments(held)`: the dataset's decisions from the
    oldest of the held attempts on (`StoreReader.decisions.judgments`)."""
    parts = held_parts(location)
    held = sorted({p.run_id for p in parts if p.part == BATCH})
    holds = plan(judgments(held), present=set(held)) if held else {}
    gone = unwanted(parts, holds)
    if gone and apply:
        _remove(location, gone, holds)
    return QuarantineState(parts=parts, holds=holds, removed=gone)


def settle_all(reader: StoreReader, warehouse: str, *, apply: bool = True) -> dict[str, list[str]]:
    """Every registered dataset's quarantine settled (`settle`): what each removed, or with
    `apply` False would remove, by quarantine table (`laketx migrate`, for the tables written
    before each batch was held once)."""
    said = {}
    for dataset in reader.definitions.datasets():
        state = settle(
            dataset_location(warehouse, quarantine_name(dataset.dataset_id)),
            partial(reader.decisions.judgments, dataset.dataset_id),
            apply=apply,
        )
        if state.removed:
            said[quarantine_name(dataset.dataset_id)] = state.said()
    return said


def _remove(location: str, gone: list[HeldPart], holds: dict[str, Hold]) -> None:
    table = storage.delta_table(location)
    actions = pa.table(table.get_add_actions(flatten=True))
    sizes = dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            strict=True,
        )
    )
    now = int(time.time() * 1000)
    removals: list[AddAction | RemoveAction] = [
        RemoveAction(f, True, now, sizes.get(f)) for p in gone for f in p.files
    ]
    said = {
        str(state): {p.run_id: holds[p.run_id].by for p in gone if holds[p.run_id].state == state}
        for state in (HoldState.SUPERSEDED, HoldState.RELEASED)
    }
    table.create_write_transaction(
        removals,
        mode="append",
        schema=table.schema(),
        commit_properties=CommitProperties(
            custom_metadata={"userMetadata": json.dumps({MARKER: said})}
        ),
    )
