"""How long metadata-only commands take on a store with a history: `laketx status` and friends.

A fresh home gets a registered project and then N recorded runs, written the way real runs
write them (one commit per table per run, through the store's own writer, so the store's own
compaction happens as it would). Then each command is run as a new process, as a user runs
it, with no Java on PATH, and its wall time measured (median of --repeat).

    .venv/bin/python bench/status_latency.py                 # 1,000 runs, 5 repeats
    .venv/bin/python bench/status_latency.py --runs 200 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from lakeguard.actors.gate import Decision, Gate
from lakeguard.store import MetadataStore, RunWriter
from lakeguard.store.store import utcnow
from openlaketx.lakehouse import Lakehouse

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

DATASETS = ("bronze_cells", "silver_cells")


def project(home: Path) -> Path:
    """The test suite's small bronze -> silver project, applied to `home`."""
    sys.path.insert(0, str(ROOT))
    from tests.support.project import cells_yaml

    doc = home / "cells.yaml"
    doc.write_text(cells_yaml(""))
    return doc


def record_runs(store: MetadataStore, runs: int) -> None:
    """`runs` job runs of two datasets each, with the rows a real run leaves."""
    from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
    from lakeguard.words.vocabulary import AttemptStatus, EventStatus, JobStatus

    writer, gate = RunWriter(store), Gate(store)
    versions = dict.fromkeys(DATASETS, 0)
    for i in range(runs):
        job_id, start = uuid.uuid4().hex, utcnow()
        rows: list[Any] = []
        for dataset in DATASETS:
            attempt = uuid.uuid4().hex
            rows += [
                RunEventRow(
                    run_id=attempt,
                    pipeline_logging_id=job_id,
                    pipeline_id="cells_job",
                    tenant_id=store.tenant,
                    dataset_id=dataset,
                    status=s,
                    event_time=utcnow(),
                )
                for s in (EventStatus.RUNNING, EventStatus.SUCCESS)
            ]
            rows.append(
                RunHistoryRow(
                    run_id=attempt,
                    pipeline_logging_id=job_id,
                    tenant_id=store.tenant,
                    dataset_id=dataset,
                    layer=dataset.split("_")[0],
                    status=AttemptStatus.SUCCESS,
                    start_time=start,
                    end_time=utcnow(),
                    rows_read=1000,
                    rows_written=1000,
                    data_version=versions[dataset] + 1,
                    triggered_by="bench",
                )
            )
            gate.record(
                gate.decision_row(dataset, attempt, Decision(True, "bench", "source", "bronze"))
            )
            previous = gate.latest(dataset) if versions[dataset] else None
            gate.record_version(
                dataset_id=dataset,
                version=versions[dataset] + 1,
                snapshot_ref=str(i),
                schema_hash="h",
                row_count=1000 * (i + 1),
                rows_written=1000,
                upstream_refs={},
                run_id=attempt,
                promoted_by="cells_job",
                previous=previous,
            )
            versions[dataset] += 1
        rows.append(
            PipelineRunRow(
                pipeline_logging_id=job_id,
                pipeline_id="cells_job",
                tenant_id=store.tenant,
                status=JobStatus.COMPLETED,
                trigger_type="bench",
                trigger_by="bench",
                start_time=start,
                end_time=utcnow(),
                duration_ms=1,
            )
        )
        writer.append(rows)
        if (i + 1) % 100 == 0:
            print(f"[bench] recorded {i + 1} runs", file=sys.stderr, flush=True)


def timed(home: Path, *args: str, repeat: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(BIN)  # no Java: the command must not need it
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(
            [str(BIN / "laketx"), "--home", str(home), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"laketx {' '.join(args)} failed: {done.stderr}")
    return {"command": " ".join(args), "median_s": statistics.median(seconds), "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="laketx-status-"))
    try:
        home = work / "lakehouse"
        lh = Lakehouse.open(home=home)
        lh.apply(project(work))
        started = time.perf_counter()
        record_runs(lh.store, args.runs)
        print(
            f"[bench] recorded {args.runs} runs in {time.perf_counter() - started:.0f}s "
            "(not measured)",
            file=sys.stderr,
        )
        results = {
            "runs": args.runs,
            "commands": [
                timed(home, "status", "--json", repeat=args.repeat),
                timed(home, "runs", "--json", repeat=args.repeat),
                timed(home, "explain", "bronze_cells", "--json", repeat=args.repeat),
                timed(home, "--help", repeat=args.repeat),
            ],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"store with {results['runs']:,} recorded runs; wall time per command, new process:")
        for c in results["commands"]:
            runs = len(c["seconds"])
            print(f"  laketx {c['command']:<28} {c['median_s']:6.2f} s (median of {runs})")
    record("status_latency", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
