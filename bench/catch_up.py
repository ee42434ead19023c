"""Cost of a catch-up: one run over N parent versions against N runs of one version each.

A bronze dataset receives N deliveries (each a snapshot of K keys, half of them also in the
delivery before, with changed values). For each load type measured (append, merge with
`sequence_by`, scd2 with `sequence_by`) two silver datasets share one definition:

* one-by-one: runs after every delivery (N runs; their times are summed);
* catch-up: runs once after the last delivery, over the N parent versions.

With `--into-table` both first take delivery 1 (untimed), so the catch-up folds versions 2..N
into a table that exists (a dataset that fell behind), against the N-1 runs of the others.

Both end with the same rows (the script checks it: rows and the content hash of what is live),
in the same process and SparkSession; only the silver runs are timed, never bronze's. An
untimed warm-up does the same at `--warmup-keys` rows first (in a lakehouse of its own), so
that the first catch-up is not the session's first Spark MERGE: since small one-version merges
and scd2 batches are merged by delta-rs, nothing else warms the MERGE's code before it.

    .venv/bin/python bench/catch_up.py                     # N=6 versions of 100,000 rows
    .venv/bin/python bench/catch_up.py --versions 4 --keys 20000 --json
    .venv/bin/python bench/catch_up.py --versions 6 --keys 10000 --into-table --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from openlaketx.lakehouse import Lakehouse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

KINDS: dict[str, dict[str, Any]] = {
    "append": {"load_type": "append"},
    "merge": {"load_type": "merge", "business_keys": ["code"], "sequence_by": "seen"},
    "scd2": {"load_type": "scd2", "business_keys": ["code"], "sequence_by": "seen"},
}


@dataclass
class KindFigures:
    one_by_one_s: float
    catch_up_s: float
    ratio: float  # catch-up / one-by-one
    same_rows: bool
    per_run_s: list[float] = field(default_factory=list)


@dataclass
class Figures:
    versions: int
    keys: int
    kinds: dict[str, KindFigures]
    into_table: bool = False  # the catch-up folded versions 2..N into an existing table


def log(message: str) -> None:
    print(f"[catch_up] {message}", file=sys.stderr, flush=True)


def document(root: Path) -> dict[str, Any]:
    datasets: list[dict[str, Any]] = [{"id": "bronze_ref", "layer": "bronze"}]
    for kind, fields in KINDS.items():
        for side in ("one", "all"):
            datasets.append(
                {"id": f"{kind}_{side}", "layer": "silver", "parents": ["bronze_ref"], **fields}
            )
    return {
        "version": 1,
        "source_systems": [{"id": "landing", "options": {"root": str(root)}}],
        "source_objects": [
            {
                "id": "ref_parquet",
                "system": "landing",
                "locator": "incoming/*.parquet",
                "format": "parquet",
                "dataset": "bronze_ref",
                "columns": [
                    {"name": "code", "type": "bigint"},
                    {"name": "name", "type": "string"},
                    {"name": "amount", "type": "bigint"},
                    {"name": "seen", "type": "timestamp"},
                ],
            }
        ],
        "datasets": datasets,
    }


def deliver(lh: Lakehouse, root: Path, version: int, keys: int) -> None:
    """Delivery `version`: keys [v*K/2, v*K/2 + K), so half of them were in the one before."""
    from pyspark.sql import functions as F

    start = version * keys // 2
    frame = lh.spark.range(start, start + keys).select(
        F.col("id").alias("code"),
        F.concat(F.lit("n"), (F.xxhash64("id", F.lit(version)) % 7).cast("string")).alias("name"),
        (F.abs(F.xxhash64(F.lit(version), "id")) % 1000).alias("amount"),
        F.to_timestamp(F.lit(f"2026-01-{version + 1:02d} 00:00:00")).alias("seen"),
    )
    frame.coalesce(1).write.mode("overwrite").parquet(str(root / "staging"))
    (part,) = (root / "staging").glob("*.parquet")
    (root / "incoming").mkdir(exist_ok=True)
    shutil.move(str(part), root / "incoming" / f"d{version:03d}.parquet")


def timed_run(lh: Lakehouse, target: str) -> float:
    started = time.perf_counter()
    result = lh.run(target)
    elapsed = time.perf_counter() - started
    if result.status != "COMPLETED":
        raise SystemExit(f"{target} ended {result.status}: {result.error}")
    return elapsed


def same(lh: Lakehouse, kind: str) -> bool:
    from openlaketx.loads.content import frame_hash

    def live(dataset: str) -> str:
        frame = lh.read(dataset)
        frame = frame.select(*[c for c in frame.columns if not c.startswith("_laketx")])
        return frame_hash(frame)

    return live(f"{kind}_one") == live(f"{kind}_all")


def measure(args: argparse.Namespace, work: Path) -> Figures:
    work.mkdir(parents=True, exist_ok=True)
    lh = Lakehouse.open(home=work / "lakehouse")
    root = work / "landing"
    root.mkdir()
    (work / "bench.yaml").write_text(yaml.safe_dump(document(root)))
    lh.apply(work / "bench.yaml")
    per_run: dict[str, list[float]] = {k: [] for k in KINDS}
    for version in range(args.versions):
        deliver(lh, root, version, args.keys)
        if lh.run("bronze_ref").status != "COMPLETED":
            raise SystemExit("bronze did not promote")
        for kind in KINDS:
            if version == 0 and args.into_table:  # both take the first delivery, untimed
                timed_run(lh, f"{kind}_one")
                timed_run(lh, f"{kind}_all")
            else:
                per_run[kind].append(timed_run(lh, f"{kind}_one"))
        if not per_run["append"]:
            continue
        log(
            f"delivery {version + 1}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in per_run.items())
        )
    kinds = {}
    for kind in KINDS:
        caught_up = timed_run(lh, f"{kind}_all")
        total = sum(per_run[kind])
        kinds[kind] = KindFigures(
            one_by_one_s=round(total, 3),
            catch_up_s=round(caught_up, 3),
            ratio=round(caught_up / total, 3),
            same_rows=same(lh, kind),
            per_run_s=[round(t, 3) for t in per_run[kind]],
        )
        log(f"{kind}: catch-up {caught_up:.2f}s vs {total:.2f}s one by one")
    return Figures(versions=args.versions, keys=args.keys, kinds=kinds, into_table=args.into_table)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=6, help="parent versions (deliveries)")
    parser.add_argument("--keys", type=int, default=100_000, help="rows per delivery")
    parser.add_argument(
        "--warmup-keys", type=int, default=1_000, help="rows per delivery of the warm-up (0: none)"
    )
    parser.add_argument(
        "--into-table",
        action="store_true",
        help="both silver datasets take the first delivery first (untimed): the catch-up "
        "then folds the others into an existing table, as a dataset that fell behind does",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary lakehouse")
    add_flags(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="laketx-catchup-"))
    try:
        if args.warmup_keys > 0:
            log(f"warm-up: {args.versions} versions of {args.warmup_keys} rows")
            measure(argparse.Namespace(**{**vars(args), "keys": args.warmup_keys}), work / "warmup")
        figures = measure(args, work / "measured")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(asdict(figures), indent=2))
    else:
        print(f"{figures.versions} parent versions of {figures.keys:,} rows each")
        for kind, f in figures.kinds.items():
            print(
                f"  {kind:7s} catch-up {f.catch_up_s:6.2f}s   one by one {f.one_by_one_s:6.2f}s"
                f"   ratio {f.ratio:.2f}   same rows: {f.same_rows}"
            )
    record("catch_up", asdict(figures), args)
    return 0 if all(f.same_rows for f in figures.kinds.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
