"""What a big MERGE pays for the engine's columns, and what deletion vectors would change.

Four Delta tables of the same N rows (`--rows`, keys 0..N-1) in one SparkSession, without and
with the six columns a governed merge table carries beside its data (`_laketx_row_hash`,
`_laketx_row_digest`, `_laketx_failed_rules`, `_laketx_version`, `_laketx_run_id`,
`_laketx_loaded_at`), each without and with `delta.enableDeletionVectors`. Each round merges
the same M changed rows (`--changes`: existing keys spread over the whole key range, new
values) into all four, each with the condition its shape asks (the bare one: `s.updated >=
t.updated`; the wide one: the row hash differs and the row is not older, as the engine's
plan says), and times each MERGE. `--warmup-rounds` (1) are not counted; medians of
`--rounds` (3). Ratios are against the narrow table without deletion vectors, the bare MERGE
of `big_merge.py`.

    .venv/bin/python bench/merge_width.py                      # 2,000,000 rows, 200,000 changes
    .venv/bin/python bench/merge_width.py --rows 200000 --changes 20000 --json
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

from pyspark.sql import SparkSession

from lakeguard.rules.quality.evaluate import FAILED_RULES, failed_rules_sql
from lakeguard.words.vocabulary import LoadType
from openlaketx.config import LakehouseConfig
from openlaketx.loads.content import DIGEST_COLUMN, row_digest_sql
from openlaketx.loads.merge_plan import ROW_HASH, MergePlan
from openlaketx.loads.strategies import row_hash_sql
from openlaketx.runner.batch import LOADED_COL, RUN_COL, VERSION_COL
from openlaketx.spark import get_or_create_session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.big_merge import delivery  # noqa: E402
from bench.results import add_flags, record  # noqa: E402

DATA = ["id", "name", "amount", "updated"]


def engine_columns(n: int) -> dict[str, str]:
    """The SQL of a merge table's engine columns in delivery `n`: the engine's own where a
    value is computed from the row."""
    return {
        ROW_HASH: row_hash_sql(DATA, ["id"]),
        DIGEST_COLUMN: row_digest_sql(DATA),
        FAILED_RULES: failed_rules_sql([]),
        VERSION_COL: f"CAST({int(n)} AS BIGINT)",
        RUN_COL: f"'run-{int(n):04d}-0123456789abcdef'",
        LOADED_COL: "current_timestamp()",
    }


BARE_CHANGED = "s.updated >= t.updated"
# the condition a governed merge with `sequence_by: updated` updates a matched row under
WIDE_CHANGED = MergePlan(load_type=LoadType.MERGE, keys=["id"], sequence_by="updated").changed()
SHAPES = {  # name: (engine columns, deletion vectors)
    "narrow": (False, False),
    "narrow_dv": (False, True),
    "wide": (True, False),
    "wide_dv": (True, True),
}


def rows(spark: SparkSession, count: int, n: int, keys: int, wide: bool) -> Any:
    """big_merge.py's delivery `n`, with the engine's columns when `wide`."""
    from pyspark.sql import functions as F

    frame = delivery(spark, n, count, keys)
    if wide:
        frame = frame.withColumns({c: F.expr(sql) for c, sql in engine_columns(n).items()})
    return frame


def table_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*.parquet"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--changes", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup-rounds", type=int, default=1, help="rounds not counted, first")
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.warmup_rounds < 0 or args.changes > args.rows:
        parser.error("--rounds must be positive, --warmup-rounds not negative, --changes <= --rows")

    work = Path(tempfile.mkdtemp(prefix="laketx-mergewidth-"))
    # a session already running (the test suite's) is used and left running
    started_here = SparkSession.getActiveSession() is None
    spark = get_or_create_session(LakehouseConfig.from_env(home=str(work / "home")))
    seconds: dict[str, list[float]] = {name: [] for name in SHAPES}
    try:
        for name, (wide, dv) in SHAPES.items():
            writer = rows(spark, args.rows, 0, args.rows, wide).write.format("delta")
            if dv:
                writer = writer.option("delta.enableDeletionVectors", "true")
            writer.save(str(work / name))
        for n in range(1, args.warmup_rounds + args.rounds + 1):
            for name, (wide, _) in SHAPES.items():
                changes = work / f"changes_{n}_{name}"
                rows(spark, args.changes, n, args.rows, wide).write.parquet(str(changes))
                spark.read.parquet(str(changes)).createOrReplaceTempView("s")
                changed = WIDE_CHANGED if wide else BARE_CHANGED
                started = time.perf_counter()
                spark.sql(
                    f"MERGE INTO delta.`{work / name}` t USING s ON t.id = s.id "
                    f"WHEN MATCHED AND {changed} THEN UPDATE SET * "
                    "WHEN NOT MATCHED THEN INSERT *"
                )
                took = time.perf_counter() - started
                spark.catalog.dropTempView("s")
                warm_up = n <= args.warmup_rounds
                if not warm_up:
                    seconds[name].append(took)
                note = " (warm-up)" if warm_up else ""
                print(f"[merge_width] round {n}{note}: {name} {took:.2f} s", file=sys.stderr)
        medians = {name: statistics.median(ts) for name, ts in seconds.items()}
        results = {
            "rows": args.rows,
            "changes": args.changes,
            "rounds": args.rounds,
            "engine_columns": list(engine_columns(0)),
            "seconds": {name: round(s, 3) for name, s in medians.items()},
            "rounds_s": {name: [round(t, 3) for t in ts] for name, ts in seconds.items()},
            "ratio": {name: round(s / medians["narrow"], 3) for name, s in medians.items()},
            "table_bytes": {name: table_bytes(work / name) for name in SHAPES},
        }
    finally:
        if started_here:
            spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, s in results["seconds"].items():
            print(f"  {name:10} {s:7.2f} s   {results['ratio'][name]:.2f}x")
    record("merge_width", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
