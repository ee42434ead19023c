"""The demo: three deliveries of the cell-tower feed through the governed job.

1. a first delivery lands in bronze and is cleaned into silver;
2. a second delivery overlaps the first, so the silver merge updates cells and adds new ones;
3. a broken delivery (a third of the positions impossible) is blocked by the gate and kept in
   quarantine; bronze and silver stay as they were.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from openlaketx.demo.feed import DeliveryStats, make_keys, write_delivery
from openlaketx.lakehouse import Lakehouse
from openlaketx.render import DemoLayer, DemoSummary
from openlaketx.runner.job import JobResult

JOB_ID = "cell_towers_daily"
DAY = 86_400


@dataclass(frozen=True)
class DemoRun:
    label: str
    delivery: DeliveryStats
    result: JobResult


def write_metadata(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "cell_towers.yaml"
    source = resources.files("openlaketx.demo").joinpath("cell_towers.yaml")
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def _deliver(incoming: Path, name: str) -> Path:
    """A new file in the landing folder; earlier ones stay (each is ingested exactly once)."""
    incoming.mkdir(parents=True, exist_ok=True)
    return incoming / name


def _prefixed(progress: Callable[[str], None], label: str) -> Callable[[str], None]:
    return lambda message: progress(f"{label}: {message}")


def run_demo(
    lakehouse: Lakehouse,
    *,
    rows: int = 20_000,
    seed: int = 7,
    progress: Callable[[str], None] = lambda _: None,
) -> list[DemoRun]:
    """Generate, declare, apply and run the demo; returns what each run did."""
    folder = lakehouse.config.home / "demo"
    yaml_path = write_metadata(folder)
    incoming = folder / "feed" / "incoming"
    progress("applying metadata")
    lakehouse.apply(yaml_path)

    keys = make_keys(random.Random(seed), rows)
    first, second = keys[: int(rows * 0.7)], keys[int(rows * 0.4) :]
    broken = random.Random(seed + 3).sample(keys, max(10, rows // 20))
    t0 = 1_750_000_000
    plan = [
        ("delivery 1", first, {"seed": seed + 1, "updated_at": t0}),
        ("delivery 2 (overlaps 1)", second, {"seed": seed + 2, "updated_at": t0 + 7 * DAY}),
        (
            "delivery 3 (broken)",
            broken,
            {"seed": seed + 3, "updated_at": t0 + 14 * DAY, "bad_lat_share": 0.35},
        ),
    ]
    runs = []
    stamp = time.strftime("%Y%m%dT%H%M%S")  # a demo run again delivers new files, as a feed does
    for index, (label, subset, options) in enumerate(plan, start=1):
        progress(f"{label}: generating {len(subset):,} rows")
        path = _deliver(incoming, f"cells_{stamp}_{index:03d}.csv")
        stats = write_delivery(path, subset, **options)  # type: ignore[arg-type]
        result = lakehouse.run(
            JOB_ID,
            trigger_type="manual",
            triggered_by="laketx demo",
            progress=_prefixed(progress, label),
        )
        runs.append(DemoRun(label, stats, result))
    return runs


def summarize(lakehouse: Lakehouse, runs: list[DemoRun]) -> DemoSummary:
    """What the demo did, read back from the metadata tables (not from memory)."""
    reader = lakehouse.reader
    steps = [s for r in runs for s in r.result.steps]
    step_label = {s.run_id: r.label for r in runs for s in r.result.steps}
    decisions = reader.decisions.decisions(run_ids=[s.run_id for s in steps])
    layers: list[DemoLayer] = [
        {
            "dataset": row.dataset_id,
            "layer": row.layer,
            "table": row.table_name,
            "approved_version": row.version,
            "rows": row.row_count,
        }
        for row in reader.status.datasets()
    ]
    layers.append(
        {
            "dataset": "bronze_cell_towers (quarantine)",
            "layer": "quarantine",
            "table": "quarantine.bronze_cell_towers",
            "approved_version": None,
            "rows": sum(s.quarantined for s in steps if s.dataset_id == "bronze_cell_towers"),
        }
    )
    return {
        "home": str(lakehouse.config.home),
        "runs": [
            {
                "delivery": r.label,
                "file_rows": r.delivery.rows,
                "status": r.result.status,
                "steps": [
                    {
                        "dataset": s.dataset_id,
                        "status": s.status,
                        "rows_read": s.rows_read,
                        "rows_written": s.rows_written,
                        "data_version": s.data_version,
                    }
                    for s in r.result.steps
                ],
                "skipped": r.result.skipped,
            }
            for r in runs
        ],
        "layers": layers,
        "rules": [
            {
                "delivery": step_label.get(d.run_id, ""),
                "dataset": d.dataset_id,
                "rule": o.rule_id,
                "severity": o.severity,
                "failed_rows": o.failed_rows,
                "rows": o.rows_evaluated,
                "outcome": o.outcome,
            }
            for d in decisions
            for o in d.rules
        ],
        "decisions": [
            {
                "delivery": step_label.get(d.run_id, ""),
                "dataset": d.dataset_id,
                "allowed": d.allowed,
                "reason": d.reason,
            }
            for d in decisions
        ],
        "versions": [
            {
                "dataset_id": v.dataset_id,
                "version": v.version,
                "snapshot_ref": v.snapshot_ref,
                "row_count": v.row_count,
                "promoted_at": v.promoted_at,
            }
            for v in reader.versions.all_versions()
        ],
    }
