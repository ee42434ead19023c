"""Cost that stays flat as history grows: the same lakehouse with 10 recorded runs and with 10,000.

Two homes in one process and one warm SparkSession, each with the same projects (the test
suite's bronze -> silver project, `--projects` copies); one gets `--small` recorded job runs,
the other `--runs`, written without Spark through the store's typed writers
(`bench/recorded_history.py`, as `dashboard_speed.py` records them). Then, on each:

* **step overhead**: a governed run of a one-row delivery to a bronze dataset that has the
  history (`Lakehouse.run`) minus a bare PySpark append of the same row to a fresh Delta path,
  as `governed_ingest.py` and `small_delivery.py` define it; rounds interleave the two homes
  (bare, small, bare, large) so that the machine's load falls on both; one warm-up round each;
  medians of `--rounds`;
* **`laketx status`** as a new process (no Java on PATH), median of `--repeat`;
* **`StoreReader.status.datasets()`** in this process, median of `--repeat`, each after the snapshot
  cache is cleared (a first read of every table, as a new process or a changed table meets).

It prints the ratio large / small of each (the issue's goal: within 1.2x); `--json` prints one
object with them.

    .venv/bin/python bench/history_growth.py                     # 10 against 10,000 runs
    .venv/bin/python bench/history_growth.py --runs 200 --rounds 2 --repeat 2 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

BIN = Path(sys.executable).parent
SCHEMA = "radio STRING, cell BIGINT, lat DOUBLE, updated BIGINT"


def log(message: str) -> None:
    print(f"[growth] {message}", file=sys.stderr, flush=True)


@dataclass
class Store:
    """One home with its recorded history and the figures measured on it."""

    name: str
    runs: int
    lh: Any
    incoming: Path
    dataset: str
    governed: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    status_cli: list[float] = field(default_factory=list)
    status_in_process: list[float] = field(default_factory=list)
    delivered: int = 0

    def deliver_one_row(self) -> Path:
        """One more one-row CSV in the landing folder (the source reads each file once)."""
        self.delivered += 1
        self.incoming.mkdir(parents=True, exist_ok=True)
        path = self.incoming / f"one_{self.delivered:05d}.csv"
        path.write_text(f"radio,cell,lat,updated\nLTE,{self.delivered},45.5,{self.delivered}\n")
        return path

    def figures(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "governed_one_row_s": self.governed,
            "bare_one_row_s": self.bare,
            "step_overhead_s": overhead(self),
            "status_cli_s": self.status_cli,
            "status_in_process_s": self.status_in_process,
        }


def overhead(store: Store) -> float:
    return statistics.median(store.governed) - statistics.median(store.bare)


def open_store(work: Path, name: str, runs: int, projects: int, per_commit: int) -> Store:
    from bench.recorded_history import project, record_history

    from openlaketx.lakehouse import Lakehouse

    tag = name[0]  # distinct ids per home: the session catalog keeps one location per name
    done = work / name / "recorded"
    lh = Lakehouse.open(home=work / name / "lakehouse")
    first = work / name / f"{tag}00" / "cells.yaml"
    if done.exists() and done.read_text() == str(runs):  # kept by --work: reuse it
        log(f"{name}: reusing the {runs} recorded runs in {work / name}")
        incoming = first.parent / "feed" / "incoming"
        delivered = len(list(incoming.glob("one_*.csv"))) if incoming.exists() else 0
        store = Store(name, runs, lh, incoming, f"bronze_cells_{tag}00")
        store.delivered = delivered
        return store
    docs = project(work / name, projects, tag)
    for doc in docs:
        lh.apply(doc)
    started = time.perf_counter()
    record_history(lh.store, projects, runs, per_commit, tag)
    done.write_text(str(runs))
    log(f"{name}: recorded {runs} runs in {time.perf_counter() - started:.0f} s (not measured)")
    return Store(name, runs, lh, docs[0].parent / "feed" / "incoming", f"bronze_cells_{tag}00")


def bare_append(spark: Any, csv: Path, target: Path) -> float:
    started = time.perf_counter()
    batch = spark.read.option("header", "true").schema(SCHEMA).csv(str(csv))
    batch.write.format("delta").mode("append").save(str(target))
    return time.perf_counter() - started


def governed_one_row(store: Store) -> float:
    store.deliver_one_row()
    started = time.perf_counter()
    result = store.lh.run(store.dataset, triggered_by="bench")
    seconds = time.perf_counter() - started
    if result.status != "COMPLETED":
        raise SystemExit(f"{store.name}: the run of {store.dataset} ended {result.status}")
    return seconds


def step_rounds(stores: list[Store], rounds: int, work: Path) -> None:
    """Bare then governed on each home in turn, a warm-up round first (not counted)."""
    spark = stores[0].lh.spark
    csv = work / "bare_in" / "one.csv"
    csv.parent.mkdir(exist_ok=True)
    csv.write_text("radio,cell,lat,updated\nLTE,1,45.5,1\n")
    for i in range(rounds + 1):
        for store in stores:
            bare = bare_append(spark, csv, work / "bare" / f"{store.name}_{time.time_ns()}")
            governed = governed_one_row(store)
            if i:
                store.bare.append(bare)
                store.governed.append(governed)
        log(f"round {i}{' (warm-up)' if not i else ''} done")


def status_cli(store: Store, repeat: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.status_latency import timed

    home = store.lh.config.home
    store.status_cli = timed(home, "status", "--json", repeat=repeat)["seconds"]


def status_in_process(store: Store, repeat: int) -> None:
    from lakeguard.reads.reader import StoreReader
    from lakeguard.store.snapshots import SNAPSHOTS

    for _ in range(repeat + 1):  # the first one warms the imports and pools, not counted
        SNAPSHOTS.clear()  # no snapshot or answer kept from before: a first read
        reader = StoreReader(store.lh.store)
        started = time.perf_counter()
        reader.status.datasets()
        store.status_in_process.append(time.perf_counter() - started)
    store.status_in_process.pop(0)


def ratio(large: list[float], small: list[float]) -> float:
    return statistics.median(large) / statistics.median(small)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10_000, help="job runs of the large store")
    parser.add_argument("--small", type=int, default=10, help="job runs of the small store")
    parser.add_argument("--projects", type=int, default=10, help="2 datasets and a job each")
    parser.add_argument("--per-commit", type=int, default=25, help="job runs per commit")
    parser.add_argument("--rounds", type=int, default=5, help="one-row step rounds")
    parser.add_argument("--repeat", type=int, default=5, help="status measurements")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--work",
        type=Path,
        help="keep the homes in this folder, and reuse the ones recorded there before",
    )
    parser.add_argument(
        "--build-only", action="store_true", help="record the homes (in --work) and stop"
    )
    add_flags(parser)
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="laketx-growth-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        stores = [
            open_store(work, name, runs, args.projects, args.per_commit)
            for name, runs in (("small", args.small), ("large", args.runs))
        ]
        if args.build_only:
            return 0
        step_rounds(stores, args.rounds, work)
        for store in stores:
            status_cli(store, args.repeat)
            status_in_process(store, args.repeat)
        small, large = stores
        results = {
            "small_runs": small.runs,
            "large_runs": large.runs,
            "projects": args.projects,
            "step_overhead_ratio": overhead(large) / overhead(small),
            # under load the small store's overhead can be near 0: the difference reads better
            "step_overhead_growth_s": overhead(large) - overhead(small),
            "governed_one_row_ratio": ratio(large.governed, small.governed),
            "status_cli_ratio": ratio(large.status_cli, small.status_cli),
            "status_in_process_ratio": ratio(large.status_in_process, small.status_in_process),
            "small": small.figures(),
            "large": large.figures(),
        }
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    record("history_growth", results, args)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{args.projects * 2} datasets; {small.runs:,} against {large.runs:,} recorded job runs")
    print(f"  {'':<30} {'small':>9} {'large':>9} {'ratio':>7}")
    rows = [
        ("step overhead (one row)", overhead(small), overhead(large)),
        ("governed one-row run", *(statistics.median(s.governed) for s in stores)),
        ("bare one-row append", *(statistics.median(s.bare) for s in stores)),
        ("laketx status (new process)", *(statistics.median(s.status_cli) for s in stores)),
        (
            "StoreReader.status.datasets()",
            *(statistics.median(s.status_in_process) for s in stores),
        ),
    ]
    for name, a, b in rows:
        print(f"  {name:<30} {a:7.3f} s {b:7.3f} s {b / a:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
