"""A big merge: a governed merge of M changed rows into an N-row silver table against a bare
Delta `MERGE INTO` of the same rows on a table of the same rows, in one SparkSession.

A bronze dataset receives a first delivery of N rows (`--rows`, keys 0..N-1), which a silver
merge dataset (`business_keys: [id]`, `sequence_by: updated`, no rules) takes whole; a bare
Delta table gets the same N rows by a plain write. Each round then delivers M changed rows
(`--changes`: existing keys spread evenly over the whole key range, new values, a greater
`updated`); bronze takes them (not timed), then two things are timed:

* **governed**: `Lakehouse.run` of the silver dataset (lease, read of bronze's new version,
  staging, the merge, the version's content hash, the decision and the run records);
* **bare**: `MERGE INTO` the bare table `USING` the same delivered file, with the same
  condition (`WHEN MATCHED AND s.updated >= t.updated THEN UPDATE SET *`,
  `WHEN NOT MATCHED THEN INSERT *`).

`--warmup-rounds` (default 1) not counted first, then medians of `--rounds`; the ratio is
governed / bare (the goal: at most 1.15x at 2 M rows and 200 k changes, bench/README.md).
Generation, setup and bronze's runs are not timed.

    .venv/bin/python bench/big_merge.py                        # 1,000,000 into 10,000,000
    .venv/bin/python bench/big_merge.py --rows 1000000 --changes 100000 --rounds 2 --json
    .venv/bin/python bench/big_merge.py --master spark://127.0.0.1:7077 --s3 s3://bench/big

`--master` and `--s3` run both jobs on that master and keep both tables there (bench/place.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.place import Place, add_place_flags  # noqa: E402
from bench.results import add_flags, record  # noqa: E402

SILVER = "silver_big"


def log(message: str) -> None:
    print(f"[big_merge] {message}", file=sys.stderr, flush=True)


def document(root: Path) -> dict[str, Any]:
    return {
        "version": 1,
        "source_systems": [{"id": "landing", "options": {"root": str(root)}}],
        "source_objects": [
            {
                "id": "big_parquet",
                "system": "landing",
                "locator": "incoming/*.parquet",
                "format": "parquet",
                "dataset": "bronze_big",
                "columns": [
                    {"name": "id", "type": "bigint"},
                    {"name": "name", "type": "string"},
                    {"name": "amount", "type": "bigint"},
                    {"name": "updated", "type": "bigint"},
                ],
            }
        ],
        "datasets": [
            {"id": "bronze_big", "layer": "bronze"},
            {
                "id": SILVER,
                "layer": "silver",
                "parents": ["bronze_big"],
                "load_type": "merge",
                "business_keys": ["id"],
                "sequence_by": "updated",
            },
        ],
    }


def delivery(spark: Any, n: int, rows: int, keys: int) -> Any:
    """Delivery `n` (id, name, amount, updated): all `keys` for n = 0, else `rows` existing keys
    spread evenly over them, with new values and `updated` = n."""
    from pyspark.sql import functions as F

    ids = spark.range(rows)
    if n:
        stride = max(keys // rows, 1)
        ids = ids.select(((F.col("id") * stride + n) % keys).alias("id"))
    return ids.select(
        F.col("id"),
        F.concat(F.lit("n"), (F.abs(F.xxhash64("id", F.lit(n))) % 1000).cast("string")).alias(
            "name"
        ),
        (F.abs(F.xxhash64(F.lit(n), "id")) % 100_000).alias("amount"),
        F.lit(n).cast("bigint").alias("updated"),
    )


def deliver(spark: Any, root: Path, n: int, rows: int, keys: int) -> Path:
    """Delivery `n` (`delivery`) as Parquet files in the landing folder."""
    staging = root / f"staging_{n:03d}"
    delivery(spark, n, rows, keys).write.parquet(str(staging))
    (root / "incoming").mkdir(exist_ok=True)
    for k, part in enumerate(sorted(staging.glob("*.parquet"))):
        shutil.move(str(part), root / "incoming" / f"d{n:03d}_{k:03d}.parquet")
    shutil.rmtree(staging)
    return root / "incoming"


def run(lh: Any, dataset: str, where: list[dict[str, Any]] | None = None) -> float:
    """`lh.run` timed; with `where`, the run's phases (step_logs) and the wall time between
    the runner's progress messages are appended to it."""
    from bench.governed_ingest import step_phases, timeline

    marks: list[tuple[float, str]] = []
    started = time.perf_counter()
    result = lh.run(
        dataset, triggered_by="bench", progress=lambda m: marks.append((time.perf_counter(), m))
    )
    ended = time.perf_counter()
    if result.status != "COMPLETED":
        raise SystemExit(f"{dataset} ended {result.status}: {result.error}")
    if where is not None:
        where.append(
            {
                "phases": step_phases(lh, result.run_id),
                "timeline": timeline(started, marks, ended),
            }
        )
    return ended - started


def bare_merge(spark: Any, files: list[Path], target: str) -> float:
    started = time.perf_counter()
    spark.read.parquet(*map(str, files)).createOrReplaceTempView("bare_changes")
    spark.sql(
        f"MERGE INTO delta.`{target}` t USING bare_changes s ON t.id = s.id "
        "WHEN MATCHED AND s.updated >= t.updated THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    seconds = time.perf_counter() - started
    spark.catalog.dropTempView("bare_changes")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the silver table")
    parser.add_argument("--changes", type=int, default=1_000_000, help="changed rows per merge")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup-rounds", type=int, default=1, help="rounds not counted, first")
    parser.add_argument("--json", action="store_true")
    add_place_flags(parser)
    add_flags(parser)
    args = parser.parse_args(argv)
    place = Place.of(args)
    if args.rounds < 1 or args.warmup_rounds < 0:
        parser.error("--rounds must be positive and --warmup-rounds not negative")

    from openlaketx.lakehouse import Lakehouse

    work = Path(tempfile.mkdtemp(prefix="laketx-bigmerge-"))
    governed: list[float] = []
    bare: list[float] = []
    where: list[dict[str, Any]] = []  # the governed rounds' phases, warm-up first
    try:
        root = work / "landing"
        root.mkdir()
        (work / "big.yaml").write_text(yaml.safe_dump(document(root), sort_keys=False))
        lh = Lakehouse.open(home=work / "lakehouse", **place.lakehouse("lakehouse"))
        bare_table = place.table(work / "bare", "bare")
        lh.apply(work / "big.yaml")
        spark = lh.spark
        started = time.perf_counter()
        incoming = deliver(spark, root, 0, args.rows, args.rows)
        spark.read.parquet(str(incoming)).write.format("delta").save(bare_table)
        run(lh, "bronze_big")
        run(lh, SILVER)
        took = time.perf_counter() - started
        log(f"{args.rows:,} rows in silver and in the bare table ({took:.0f} s, not timed)")
        for n in range(1, args.warmup_rounds + args.rounds + 1):
            deliver(spark, root, n, args.changes, args.rows)
            run(lh, "bronze_big")
            g = run(lh, SILVER, where)
            b = bare_merge(spark, sorted(incoming.glob(f"d{n:03d}_*.parquet")), bare_table)
            warm_up = n <= args.warmup_rounds
            if not warm_up:
                governed.append(g)
                bare.append(b)
            note = " (warm-up)" if warm_up else ""
            log(f"round {n - args.warmup_rounds}{note}: governed {g:.2f} s, bare {b:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        place.cleanup()

    results = {
        "rows": args.rows,
        "changes": args.changes,
        "rounds": args.rounds,
        **place.describe(),
        "ratio": statistics.median(governed) / statistics.median(bare),
        "governed_s": statistics.median(governed),
        "bare_s": statistics.median(bare),
        "governed_rounds_s": governed,
        "bare_rounds_s": bare,
        "governed_where": where,
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        where = f"master {results['master']}, tables on {results['tables']}"
        print(f"{args.changes:,} changed rows into {args.rows:,}, medians of {args.rounds}:")
        print(f"  ({where})")
        print(f"  bare MERGE INTO         {results['bare_s']:7.2f} s")
        print(f"  governed Lakehouse.run  {results['governed_s']:7.2f} s")
        print(f"  ratio                   {results['ratio']:7.2f}x")
    record("big_merge", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
