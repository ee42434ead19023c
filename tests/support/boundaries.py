"""A pipeline whose derived datasets come in pairs, to compare batch boundaries.

One bronze dataset receives deliveries (each a full snapshot of a small reference table, as a
CSV file). Every derived dataset exists twice with the same definition: `<kind>_one` runs after
every delivery (one parent version per run), `<kind>_all` runs only now and then and catches up
on every parent version since its last run. At the end both must hold the same rows.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.project import write

# kind -> the dataset fields that make it. Its parent is the bronze dataset, except for
# snapshot kinds (`delete_missing`), whose parent is `full_one`: each of its versions is a
# full snapshot.
KINDS: dict[str, str] = {
    "append": "load_type: append",
    "full": "load_type: full",
    "merge": "load_type: merge\n    business_keys: [code]",
    "merge_seq": "load_type: merge\n    business_keys: [code]\n    sequence_by: seen",
    "merge_hard": "load_type: merge\n    business_keys: [code]\n    sequence_by: seen\n"
    "    delete_missing: hard",
    "merge_soft": "load_type: merge\n    business_keys: [code]\n    delete_missing: soft",
    "scd2_seq": "load_type: scd2\n    business_keys: [code]\n    sequence_by: seen\n"
    "    hash_strategy: {exclude: [seen]}",
    "scd2_soft": "load_type: scd2\n    business_keys: [code]\n    sequence_by: seen\n"
    "    delete_missing: soft",
    "scd2_hard": "load_type: scd2\n    business_keys: [code]\n    delete_missing: hard",
}
# SQL models over the `merge_one` dataset (gold needs a silver parent)
MODELS: dict[str, str] = {
    "model_full": "SELECT name, count(*) AS n, sum(amount) AS total FROM {parent} GROUP BY name",
    "model_keys": "SELECT code, max(name) AS name, sum(amount) AS total FROM {parent} "
    "GROUP BY code",
}
HEADER = "code,name,amount,seen"


def snapshot_kind(kind: str) -> bool:
    return "delete_missing" in KINDS.get(kind, "")


@dataclass
class Pairs:
    """The project on disk and the ids of its datasets and jobs."""

    root: Path
    suffix: str
    kinds: tuple[str, ...]
    models: tuple[str, ...]
    delivered: int = 0
    files: list[Path] = field(default_factory=list)

    @property
    def yaml(self) -> Path:
        return self.root / "pairs.yaml"

    @property
    def bronze(self) -> str:
        return f"bronze_ref{self.suffix}"

    def ds(self, kind: str, side: str) -> str:
        return f"{kind}_{side}{self.suffix}"

    @property
    def job_one(self) -> str:
        return f"one_by_one{self.suffix}"

    @property
    def job_all(self) -> str:
        return f"catch_up{self.suffix}"

    def pairs(self) -> list[tuple[str, str, str]]:
        """(kind, one-by-one dataset, catch-up dataset) of every pair."""
        return [(k, self.ds(k, "one"), self.ds(k, "all")) for k in (*self.kinds, *self.models)]

    def document(self) -> str:
        s = self.suffix
        datasets = [f"  - id: {self.bronze}\n    layer: bronze"]
        one_tasks = [f"      - {{id: ingest, dataset: {self.bronze}}}"]
        all_tasks = []
        snapshots = self.ds("full", "one")
        for kind in sorted(self.kinds, key=snapshot_kind):  # `full` before snapshot kinds
            parent, after = self.bronze, "ingest"
            if snapshot_kind(kind):
                parent = after = snapshots
            for side in ("one", "all"):
                ds = self.ds(kind, side)
                datasets.append(
                    f"  - id: {ds}\n    layer: silver\n    parents: [{parent}]\n    {KINDS[kind]}"
                )
                tasks = one_tasks if side == "one" else all_tasks
                deps = f"[{after}]" if side == "one" else "[]"
                tasks.append(f"      - {{id: {ds}, dataset: {ds}, depends_on: {deps}}}")
        parent = self.ds("merge", "one")
        for model in self.models:
            refresh = "\n    refresh_keys: [code]" if model == "model_keys" else ""
            for side in ("one", "all"):
                ds = self.ds(model, side)
                sql = MODELS[model].format(parent=parent)
                datasets.append(
                    f"  - id: {ds}\n    layer: gold\n    parents: [{parent}]\n"
                    f'    sql: "{sql}"{refresh}'
                )
                tasks = one_tasks if side == "one" else all_tasks
                deps = f"[{parent}]" if side == "one" else "[]"
                tasks.append(f"      - {{id: {ds}, dataset: {ds}, depends_on: {deps}}}")
        return (
            textwrap.dedent(
                f"""
                version: 1
                source_systems:
                  - id: landing{s}
                    options: {{root: landing}}
                source_objects:
                  - id: ref{s}_csv
                    system: landing{s}
                    locator: "incoming/*.csv"
                    options: {{header: "true"}}
                    dataset: {self.bronze}
                    columns:
                      - {{name: code, type: bigint}}
                      - {{name: name, type: string}}
                      - {{name: amount, type: bigint}}
                      - {{name: seen, type: timestamp}}
                rules:
                  - {{id: amount_ok{s}, dataset: {self.bronze}, type: RANGE, column: amount, min: 0, severity: FAIL}}
                jobs:
                """
            ).lstrip()
            + f"  - id: {self.job_one}\n    tasks:\n"
            + "\n".join(one_tasks)
            + f"\n  - id: {self.job_all}\n    tasks:\n"
            + "\n".join(all_tasks)
            + "\ndatasets:\n"
            # no batch profile: profiles prove nothing about batch boundaries
            # (tests/lakeguard/records/test_profiling.py covers them), and each step read the
            # earlier runs' profiles and appended its own
            + "\n".join(f"{d}\n    profile: false" for d in datasets)
            + "\n"
        )

    def write(self) -> Path:
        return write(self.yaml, self.document())

    def deliver(self, rows: list[tuple[int, str, int, int]]) -> Path:
        """One more snapshot file: (code, name, amount, day of `seen`) per row."""
        self.delivered += 1
        lines = [f"{c},{n},{a},2026-01-{d:02d} 00:00:00" for c, n, a, d in rows]
        path = self.root / "landing" / "incoming" / f"d{self.delivered:03d}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(HEADER + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
        self.files.append(path)
        return path


ENGINE_PREFIX = "_laketx"


def twin_state(lh: Any, dataset_id: str, kind: str) -> tuple[list[tuple[Any, ...]], str]:
    """A dataset's rows (`table_rows`) and the content hash of what is live (`live_hash`),
    both from one read of its latest approved snapshot."""
    frame = lh.read(dataset_id)
    return table_rows(frame, kind), live_hash(frame, kind)


def table_rows(frame: Any, kind: str) -> list[tuple[Any, ...]]:
    """A dataset's rows as sorted tuples, without what depends on when a run ran: the engine's
    columns, and for scd2 the times that are load times (no time-typed `sequence_by`, or a
    version closed because its key went missing)."""
    from pyspark.sql import functions as F

    columns = [c for c in frame.columns if not c.startswith(ENGINE_PREFIX)]
    if "_laketx_deleted_at" in frame.columns:
        frame = frame.withColumn("deleted", F.col("_laketx_deleted_at").isNotNull())
        columns.append("deleted")
    if kind.startswith("scd2"):
        by_load_time = "sequence_by" not in KINDS[kind]
        if by_load_time:
            columns = [c for c in columns if c not in ("valid_from", "valid_to")]
        elif "deleted" in columns:
            frame = frame.withColumn(
                "valid_to", F.when(F.col("deleted"), F.lit(None)).otherwise(F.col("valid_to"))
            )
    rows = [tuple(r) for r in frame.select(*columns).collect()]
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r))


def live_hash(frame: Any, kind: str) -> str:
    """The content hash of what is live: current (scd2), not soft-deleted rows."""
    from pyspark.sql import functions as F

    from openlaketx.loads.content import frame_hash

    if "is_current" in frame.columns:
        frame = frame.where(F.col("is_current"))
        if "sequence_by" not in KINDS.get(kind, ""):
            frame = frame.drop("valid_from", "valid_to")
    if "_laketx_deleted_at" in frame.columns:
        frame = frame.where(F.col("_laketx_deleted_at").isNull())
    return frame_hash(frame)
