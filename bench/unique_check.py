"""Cost of the UNIQUE check on its own, against reading its key columns once.

A staged-like batch (Parquet: a unique ``id`` bigint, a unique ``email`` string, a ``region``
and ``day`` pair, ~40 bytes of other columns) is written once under a temporary folder. For
each key shape, in the same SparkSession:

* baseline: the key columns read once (``select(keys)`` written to Spark's ``noop`` sink);
* unique: ``lakeguard.rules.quality.evaluate.evaluate_unique``, the check the gate runs.

The figures are the best of ``--repeat`` rounds; the ratio is unique / baseline. The data has
no duplicate (the normal case for a FAIL rule that holds); ``--dupes N`` plants N duplicate
ids to time the case the check must find something.

    .venv/bin/python bench/unique_check.py                     # 2,000,000 rows
    .venv/bin/python bench/unique_check.py --rows 500000 --repeat 5 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.evaluate import evaluate_unique
from lakeguard.rules.quality.kinds.base import as_text
from openlaketx.config import LakehouseConfig
from openlaketx.spark import get_or_create_session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

KEYS: dict[str, tuple[str, ...]] = {
    "bigint": ("id",),
    "string": ("email",),
    "composite": ("region", "day", "seq"),
}


def rule(keys: tuple[str, ...]) -> CompiledRule:
    return CompiledRule(
        rule_id="unique",
        rule_type="UNIQUE",
        severity="FAIL",
        threshold=0.0,
        columns=keys,
        violation_sql=None,
        sample_sql=as_text(keys),
        unique_keys=keys,
    )


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dupes", type=int, default=0, help="duplicate ids to plant")
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="laketx-unique-"))
    # a session already running (the test suite's) is used and left running
    started_here = SparkSession.getActiveSession() is None
    spark = get_or_create_session(LakehouseConfig.from_env(home=str(work / "home")))
    try:
        staged = str(work / "staged")
        (
            spark.range(0, args.rows, 1, numPartitions=args.files)
            .selectExpr(
                f"CASE WHEN id < {args.dupes} THEN id + 1 ELSE id END AS id",
                "concat('user', id, '@example.org') AS email",
                "CAST(pmod(id, 50) AS INT) AS region",
                "date_add(DATE'2024-01-01', CAST(pmod(id DIV 50, 365) AS INT)) AS day",
                "id DIV 18250 AS seq",
                "rand(7) * 1000 AS amount",
                "CAST(rand(8) * 5 AS INT) AS cat",
            )
            .write.parquet(staged)
        )
        figures: dict[str, dict[str, float | int]] = {}
        for shape, keys in KEYS.items():
            frame = spark.read.parquet(staged)

            def read_keys(frame: Any = frame, keys: tuple[str, ...] = keys) -> None:
                frame.select(*keys).write.format("noop").mode("overwrite").save()

            def check(frame: Any = frame, keys: tuple[str, ...] = keys) -> int:
                return evaluate_unique(frame, rule(keys), args.rows).failed_rows

            read_keys()  # warm: file listing, code generation
            baseline, _ = best(read_keys, args.repeat)
            unique, failed = best(check, args.repeat)
            figures[shape] = {
                "read_keys_s": round(baseline, 3),
                "unique_s": round(unique, 3),
                "ratio": round(unique / baseline, 2),
                "failed_rows": failed,
            }
            print(f"[bench] {shape}: {figures[shape]}", file=sys.stderr, flush=True)
        results = {"rows": args.rows, "files": args.files, "keys": figures}
        if args.json:
            print(json.dumps(results, indent=2))
    finally:
        if started_here:
            spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    record("unique_check", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
