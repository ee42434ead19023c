"""Cost of governance: a governed ingest against a bare PySpark job doing the same work.

Both paths read the same TPC-H `lineitem`-like CSV files with the same explicit schema and
append them to a fresh Delta table, in the same process and the same SparkSession:

* baseline: ``spark.read.csv(...)`` then ``df.write.format("delta").mode("append").save(...)``;
* governed: ``Lakehouse.run("bench_lineitem")``, i.e. read, evaluate every quality rule and
  profile metric, record the gate's decision and evidence, one tagged Delta commit, record the
  version and the run's lifecycle rows.

The data is generated once with Spark (deterministic expressions over ``spark.range``) under
``--data`` (``bench/data/``) and reused while its marker file names the same row count. The
figures are also kept as a file under ``bench/results/`` (``bench/results.py``). Generation, the
warm-up, ``Lakehouse.open`` and ``apply`` are outside the measured times; only the baseline
read+write and ``lh.run(...)`` are timed (``time.perf_counter``).

With ``--dirty`` the input is an event feed (id, amount, cat, email, dt) whose every file has
rows failing three WARN rules (REGEX ~2 %, ALLOWED_VALUES ~20 % under a 0.25 tolerance,
EXPRESSION ~1 %) while its FAIL rules (NOT_NULL x2, RANGE, UNIQUE) hold, so the batch is
still promoted; same CSV format, same kind of baseline, same figures.

    .venv/bin/python bench/governed_ingest.py                  # 3,000,000 rows, 1 round
    .venv/bin/python bench/governed_ingest.py --rows 200000 --repeat 3 --json
    .venv/bin/python bench/governed_ingest.py --dirty --rows 2000000 --repeat 2 --json
    .venv/bin/python bench/governed_ingest.py --master spark://127.0.0.1:7077 --s3 s3://bench/in

``--master`` and ``--s3`` run both paths on that master and keep every table (the lakehouses'
and the baseline's) under that prefix (``bench/place.py``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from openlaketx.lakehouse import Lakehouse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.place import Place, add_place_flags  # noqa: E402
from bench.results import add_flags, record  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DATASET_ID = "bench_lineitem"
GENERATOR_VERSION = 2
MARKER = "_bench_meta.json"  # leading "_": Spark ignores it, and "*.csv" does not match it
DATA_ROOT = Path(__file__).resolve().parent / "data"

# (name, type) in file order; the same list drives the generator, the YAML and the baseline.
COLUMNS: list[tuple[str, str]] = [
    ("l_orderkey", "bigint"),
    ("l_partkey", "bigint"),
    ("l_suppkey", "bigint"),
    ("l_linenumber", "int"),
    ("l_quantity", "double"),
    ("l_extendedprice", "double"),
    ("l_discount", "double"),
    ("l_tax", "double"),
    ("l_returnflag", "string"),
    ("l_linestatus", "string"),
    ("l_shipdate", "date"),
    ("l_commitdate", "date"),
    ("l_receiptdate", "date"),
    ("l_shipinstruct", "string"),
    ("l_shipmode", "string"),
    ("l_comment", "string"),
]

SHIPMODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]

# All FAIL rules hold on the generated data, so the gate allows the batch (COMPLETED).
RULES: list[dict[str, Any]] = [
    {
        "id": "r01_keys_not_null",
        "type": "NOT_NULL",
        "columns": ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber"],
        "severity": "FAIL",
    },
    {
        "id": "r02_dates_not_null",
        "type": "NOT_NULL",
        "columns": ["l_shipdate", "l_commitdate", "l_receiptdate"],
        "severity": "FAIL",
    },
    {
        "id": "r03_quantity_range",
        "type": "RANGE",
        "column": "l_quantity",
        "min": 1,
        "max": 50,
        "severity": "FAIL",
    },
    {
        "id": "r04_discount_range",
        "type": "RANGE",
        "column": "l_discount",
        "min": 0,
        "max": 0.1,
        "severity": "FAIL",
    },
    {
        "id": "r05_tax_range",
        "type": "RANGE",
        "column": "l_tax",
        "min": 0,
        "max": 0.08,
        "severity": "FAIL",
    },
    {
        "id": "r06_returnflag",
        "type": "ALLOWED_VALUES",
        "column": "l_returnflag",
        "values": ["A", "N", "R"],
        "severity": "FAIL",
    },
    {
        "id": "r07_linestatus",
        "type": "ALLOWED_VALUES",
        "column": "l_linestatus",
        "values": ["O", "F"],
        "severity": "FAIL",
    },
    {
        "id": "r08_shipmode_known",
        "type": "ALLOWED_VALUES",
        "column": "l_shipmode",
        "values": SHIPMODES,
        "severity": "WARN",
    },
    {
        "id": "r09_shipmode_format",
        "type": "REGEX",
        "column": "l_shipmode",
        "pattern": "^[A-Z ]+$",
        "severity": "WARN",
    },
    {
        "id": "r10_line_unique",
        "type": "UNIQUE",
        "columns": ["l_orderkey", "l_linenumber"],
        "severity": "FAIL",
    },
    {
        "id": "r11_receipt_after_ship",
        "type": "EXPRESSION",
        "expression": "l_receiptdate >= l_shipdate",
        "severity": "WARN",
    },
    {
        "id": "r12_price_positive",
        "type": "EXPRESSION",
        "expression": "l_extendedprice > 0",
        "severity": "FAIL",
        "threshold": 0.0,
    },
]


# -- data -------------------------------------------------------------------------------------
def _h(seed: int, key: str = "id") -> str:
    """A deterministic pseudo-random non-negative bigint for each row (`key`) and `seed`."""
    return f"abs(xxhash64({key}, {seed}))"


def _pick(values: list[str], seed: int) -> str:
    quoted = ", ".join(f"'{v}'" for v in values)
    return f"element_at(array({quoted}), CAST(pmod({_h(seed)}, {len(values)}) + 1 AS INT))"


def lineitem_frame(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    """`rows` lineitem-like rows: 4 lines per order, so (l_orderkey, l_linenumber) is unique."""
    words = [
        "carefully",
        "final",
        "deposits",
        "sleep",
        "quickly",
        "ironic",
        "packages",
        "boost",
        "furiously",
        "regular",
        "requests",
        "haggle",
        "blithely",
        "express",
    ]
    cutoff = "DATE'1995-06-17'"
    base = spark.range(0, rows, 1, numPartitions=partitions).selectExpr(
        "id",
        "id div 4 + 1 AS l_orderkey",
        f"pmod({_h(1)}, 200000) + 1 AS l_partkey",
        f"pmod({_h(2)}, 10000) + 1 AS l_suppkey",
        "CAST(id % 4 + 1 AS INT) AS l_linenumber",
        f"CAST(pmod({_h(3)}, 50) + 1 AS DOUBLE) AS l_quantity",
        f"CAST(pmod({_h(4)}, 100001) AS DOUBLE) / 100 + 900 AS unit_price",
        f"CAST(pmod({_h(5)}, 11) AS DOUBLE) / 100 AS l_discount",
        f"CAST(pmod({_h(6)}, 9) AS DOUBLE) / 100 AS l_tax",
        f"date_add(DATE'1992-01-01', CAST(pmod({_h(7, 'id div 4')}, 2406) AS INT)) AS o_date",
    )
    dated = base.selectExpr(
        "*",
        f"date_add(o_date, CAST(pmod({_h(8)}, 121) + 1 AS INT)) AS ship",
        f"date_add(o_date, CAST(pmod({_h(9)}, 61) + 30 AS INT)) AS commit",
    ).selectExpr("*", f"date_add(ship, CAST(pmod({_h(10)}, 30) + 1 AS INT)) AS receipt")
    return dated.selectExpr(
        "l_orderkey",
        "l_partkey",
        "l_suppkey",
        "l_linenumber",
        "l_quantity",
        "round(l_quantity * unit_price, 2) AS l_extendedprice",
        "l_discount",
        "l_tax",
        f"CASE WHEN receipt <= {cutoff} THEN {_pick(['R', 'A'], 11)} ELSE 'N' END AS l_returnflag",
        f"CASE WHEN ship > {cutoff} THEN 'O' ELSE 'F' END AS l_linestatus",
        "date_format(ship, 'yyyy-MM-dd') AS l_shipdate",
        "date_format(commit, 'yyyy-MM-dd') AS l_commitdate",
        "date_format(receipt, 'yyyy-MM-dd') AS l_receiptdate",
        f"{_pick(['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'], 12)}"
        " AS l_shipinstruct",
        f"{_pick(SHIPMODES, 13)} AS l_shipmode",
        f"concat_ws(' ', {_pick(words, 14)}, {_pick(words, 15)}, {_pick(words, 16)}) AS l_comment",
    )


# -- dirty mode: a feed whose every file breaks three WARN rules ------------------------------
DIRTY_DATASET_ID = "bench_events"
DIRTY_GENERATOR_VERSION = 1

DIRTY_COLUMNS: list[tuple[str, str]] = [
    ("id", "bigint"),
    ("amount", "double"),
    ("cat", "string"),
    ("email", "string"),
    ("dt", "date"),
]

CATEGORIES = ["books", "games", "garden", "home", "toys"]
EMAIL_PATTERN = r"^[a-z0-9._-]+@[a-z0-9-]+(\.[a-z0-9-]+)+$"

# Per-row failure rates (percent) of the three WARN rules; drawn independently per row from
# xxhash64, so every file (a contiguous range of ids) holds failing rows of all three.
DIRTY_EMAIL_PCT = 2
DIRTY_CAT_PCT = 20
DIRTY_AMOUNT_PCT = 1

# The FAIL rules hold on the generated data and the WARN rules fail at ~2 %, ~20 % and ~1 %:
# WARN never blocks, and 20 % stays inside the ALLOWED_VALUES tolerance, so the gate allows
# the batch (COMPLETED) after counting every rule over every staged file.
DIRTY_RULES: list[dict[str, Any]] = [
    {"id": "d01_id_not_null", "type": "NOT_NULL", "columns": ["id"], "severity": "FAIL"},
    {"id": "d02_dt_not_null", "type": "NOT_NULL", "columns": ["dt"], "severity": "FAIL"},
    {
        "id": "d03_amount_range",
        "type": "RANGE",
        "column": "amount",
        "min": 0,
        "max": 10000,
        "severity": "FAIL",
    },
    {
        "id": "d04_cat_known",
        "type": "ALLOWED_VALUES",
        "column": "cat",
        "values": CATEGORIES,
        "severity": "WARN",
        "threshold": 0.25,
    },
    {
        "id": "d05_email_format",
        "type": "REGEX",
        "column": "email",
        "pattern": EMAIL_PATTERN,
        "severity": "WARN",
    },
    {
        "id": "d06_amount_whole_unit",
        "type": "EXPRESSION",
        "expression": "amount >= 1",
        "severity": "WARN",
    },
    {"id": "d07_id_unique", "type": "UNIQUE", "columns": ["id"], "severity": "FAIL"},
]


def dirty_frame(spark: SparkSession, rows: int, partitions: int) -> DataFrame:
    """`rows` events with unique ids; ~2 % bad emails, ~20 % unknown categories and ~1 %
    amounts below 1 (still inside the RANGE), each drawn independently per row."""
    base = spark.range(0, rows, 1, numPartitions=partitions).selectExpr(
        "id",
        f"pmod({_h(21)}, 100) AS u_email",
        f"pmod({_h(22)}, 100) AS u_cat",
        f"pmod({_h(23)}, 100) AS u_amount",
        f"{_pick(['example.com', 'mail.example.org', 'shop.example.net'], 24)} AS domain",
        f"{_pick(CATEGORIES, 25)} AS good_cat",
        f"{_pick(['unknown', 'Books', 'misc', 'n/a'], 26)} AS bad_cat",
        f"CAST(pmod({_h(27)}, 999900) AS DOUBLE) / 100 + 1 AS good_amount",
        f"CAST(pmod({_h(28)}, 100) AS DOUBLE) / 100 AS bad_amount",
        f"date_add(DATE'2026-01-01', CAST(pmod({_h(29)}, 365) AS INT)) AS day",
    )
    return base.selectExpr(
        "id + 1 AS id",
        f"CASE WHEN u_amount < {DIRTY_AMOUNT_PCT} THEN bad_amount ELSE good_amount END AS amount",
        f"CASE WHEN u_cat < {DIRTY_CAT_PCT} THEN bad_cat ELSE good_cat END AS cat",
        f"CASE WHEN u_email < {DIRTY_EMAIL_PCT} THEN concat('user', id, ' at ', domain)"
        " ELSE concat('user', id, '@', domain) END AS email",
        "date_format(day, 'yyyy-MM-dd') AS dt",
    )


@dataclass(frozen=True)
class Mode:
    """What a benchmark mode ingests: its data, its metadata document and its rules."""

    name: str
    dataset_id: str
    system_id: str
    object_id: str
    table: str
    folder_prefix: str
    generator: int
    columns: list[tuple[str, str]]
    rules: list[dict[str, Any]]
    frame: Callable[[SparkSession, int, int], DataFrame]
    one_row: str  # a CSV data line for the one-row step overhead; breaks no rule


CLEAN = Mode(
    name="clean",
    dataset_id=DATASET_ID,
    system_id="tpch",
    object_id="lineitem_csv",
    table="bronze.lineitem",
    folder_prefix="lineitem",
    generator=GENERATOR_VERSION,
    columns=COLUMNS,
    rules=RULES,
    frame=lineitem_frame,
    one_row="1,1,1,1,1.0,100.0,0.05,0.01,N,O,1996-01-01,1996-01-02,1996-01-03,NONE,AIR,one row",
)

DIRTY = Mode(
    name="dirty",
    dataset_id=DIRTY_DATASET_ID,
    system_id="feed",
    object_id="events_csv",
    table="bronze.events",
    folder_prefix="events_dirty",
    generator=DIRTY_GENERATOR_VERSION,
    columns=DIRTY_COLUMNS,
    rules=DIRTY_RULES,
    frame=dirty_frame,
    one_row="1,10.0,books,user1@example.com,2026-01-01",
)


def _marker_matches(folder: Path, rows: int, partitions: int, generator: int) -> bool:
    marker = folder / MARKER
    if not marker.exists() or not any(folder.glob("*.csv")):
        return False
    try:
        meta = json.loads(marker.read_text())
    except ValueError:
        return False
    wanted = {"rows": rows, "generator": generator, "partitions": partitions}
    return all(meta.get(k) == v for k, v in wanted.items())


def ensure_data(
    spark: SparkSession, root: Path, rows: int, partitions: int, mode: Mode = CLEAN
) -> Path:
    """The CSV folder for `rows` rows, generated (and marked) only if not already there."""
    folder = root / f"{mode.folder_prefix}_{rows}"
    if _marker_matches(folder, rows, partitions, mode.generator):
        log(f"reusing {folder}")
        return folder
    log(f"generating {rows:,} rows into {folder} ({partitions} files)")
    started = time.perf_counter()
    (
        mode.frame(spark, rows, partitions)
        .write.mode("overwrite")
        .option("header", "true")
        .csv(str(folder))
    )
    meta = {"rows": rows, "generator": mode.generator, "partitions": partitions}
    (folder / MARKER).write_text(json.dumps(meta) + "\n")
    log(f"generated in {time.perf_counter() - started:.1f}s (not part of the measurement)")
    return folder


def warm_page_cache(folder: Path) -> int:
    """Read every CSV file once so neither path pays cold disk reads; returns bytes read."""
    total = 0
    for path in sorted(folder.glob("*.csv")):
        with path.open("rb") as handle:
            while chunk := handle.read(8 << 20):
                total += len(chunk)
    return total


# -- the two paths ----------------------------------------------------------------------------
def schema_ddl(mode: Mode = CLEAN) -> str:
    return ", ".join(f"`{name}` {type_.upper()}" for name, type_ in mode.columns)


def run_baseline(
    spark: SparkSession, folder: Path, target: str | Path, mode: Mode = CLEAN
) -> float:
    """Bare PySpark: CSV read with the explicit schema, one Delta append. Returns seconds."""
    started = time.perf_counter()
    frame = (
        spark.read.format("csv")
        .option("header", "true")
        .schema(schema_ddl(mode))
        .load(f"{folder}/*.csv")
    )
    frame.write.format("delta").mode("append").save(str(target))
    return time.perf_counter() - started


def baseline_rows_written(spark: SparkSession, target: str | Path) -> int:
    from delta.tables import DeltaTable

    last = DeltaTable.forPath(spark, str(target)).history(1).collect()[0]
    return int((last["operationMetrics"] or {}).get("numOutputRows", 0))


def metadata_document(folder: Path, mode: Mode = CLEAN) -> dict[str, Any]:
    return {
        "version": 1,
        "source_systems": [
            {"id": mode.system_id, "kind": "file", "options": {"root": str(folder)}}
        ],
        "source_objects": [
            {
                "id": mode.object_id,
                "system": mode.system_id,
                "locator": "*.csv",
                "format": "csv",
                "options": {"header": "true"},
                "dataset": mode.dataset_id,
                "load_type": "append",
                "columns": [{"name": name, "type": type_} for name, type_ in mode.columns],
            }
        ],
        "datasets": [{"id": mode.dataset_id, "layer": "bronze", "table": mode.table}],
        "rules": [{"dataset": mode.dataset_id, **rule} for rule in mode.rules],
    }


def open_home(home: Path, place: Place) -> Lakehouse:
    """Open a fresh lakehouse at `home` (its tables where `place` keeps them) in the running
    session (or start Spark); not timed."""
    home.mkdir(parents=True, exist_ok=True)
    lh = Lakehouse.open(home=home, **place.lakehouse(home.name))
    where = lh.sql("DESCRIBE DETAIL lakeguard.step_logs").first()
    fresh = place.prefix or str(home.resolve())
    if where is None or fresh.split("://")[-1] not in str(where["location"]):
        raise SystemExit(
            f"lakeguard.step_logs points at {where and where['location']}, "
            f"not into the fresh home {home}"
        )
    return lh


def step_overhead(
    work: Path, place: Place, rounds: int = 5, mode: Mode = CLEAN
) -> tuple[float, list[float], list[float]]:
    """Median over `rounds` of (governed run of a one-row batch) - (bare append of that row).

    Each governed round opens a fresh home (open and apply not timed), so every run promotes
    exactly the one row, as a daily job with one small delivery does.
    """
    one = work / "one_row"
    one.mkdir(parents=True, exist_ok=True)
    header = ",".join(name for name, _ in mode.columns)
    (one / "part-0.csv").write_text(f"{header}\n{mode.one_row}\n")
    bare: list[float] = []
    governed: list[float] = []
    for i in range(rounds):
        lh = open_home(work / f"home_one_{i}", place)
        target = place.table(work / "one_row_baseline" / f"r{i}", f"one_row_r{i}")
        bare.append(run_baseline(lh.spark, one, target, mode))
        apply_document(lh, one, mode)
        governed.append(run_governed(lh, mode).seconds)
    overhead = statistics.median(g - b for g, b in zip(governed, bare, strict=True))
    return overhead, bare, governed


def apply_document(lh: Lakehouse, folder: Path, mode: Mode = CLEAN) -> Path:
    """Write the metadata document for `folder` into the home and apply it; not timed."""
    document = lh.config.home / f"{mode.dataset_id}.yaml"
    document.write_text(yaml.safe_dump(metadata_document(folder, mode), sort_keys=False))
    lh.apply(document)
    return document


@dataclass
class GovernedRound:
    seconds: float
    run_id: str
    rows_read: int | None
    rows_written: int | None
    phases: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)


def run_governed(lh: Lakehouse, mode: Mode = CLEAN) -> GovernedRound:
    """`lh.run` timed on its own; fails loudly unless the gate allowed the batch.

    The progress callback only notes a timestamp per message: it splits the wall time into the
    segments between the runner's messages, including the parts no step_logs row covers.
    """
    marks: list[tuple[float, str]] = []
    started = time.perf_counter()
    result = lh.run(
        mode.dataset_id,
        triggered_by="bench",
        progress=lambda msg: marks.append((time.perf_counter(), msg)),
    )
    ended = time.perf_counter()
    seconds = ended - started
    step = result.steps[0] if result.steps else None
    if result.status != "COMPLETED" or step is None:
        reason = step.reason if step is not None else result.error
        raise SystemExit(f"governed run ended {result.status}, not COMPLETED: {reason}")
    return GovernedRound(
        seconds,
        result.run_id,
        step.rows_read,
        step.rows_written,
        step_phases(lh, result.run_id),
        timeline(started, marks, ended),
    )


def timeline(started: float, marks: list[tuple[float, str]], ended: float) -> list[dict[str, Any]]:
    """Seconds from each progress message to the next (the first segment starts at the call)."""
    points = [(started, "(call)"), *marks, (ended, "(return)")]
    return [
        {"segment": f"{a[1]} -> {b[1]}", "seconds": round(b[0] - a[0], 3)}
        for a, b in pairwise(points)
    ]


def step_phases(lh: Lakehouse, run_id: str) -> list[dict[str, Any]]:
    rows = lh.store.rows("step_logs", filters=[("pipeline_logging_id", "=", run_id)])
    return [
        {k: row[k] for k in ("step_name", "step_type", "duration_ms")}
        for row in sorted(rows, key=lambda r: r["step_index"])
    ]


# -- orchestration ----------------------------------------------------------------------------
@dataclass
class Figures:
    mode: str  # "clean" or "dirty"
    rows: int
    rules: int
    repeat: int
    baseline_seconds: list[float]
    governed_seconds: list[float]
    baseline_s: float  # median
    governed_s: float  # median
    ratio: float  # governed_s / baseline_s
    overhead_pct: float
    step_overhead_s: float  # median of (governed one-row run - bare one-row append)
    one_row_baseline_seconds: list[float]
    one_row_governed_seconds: list[float]
    baseline_rows_written: list[int]
    governed: list[GovernedRound]
    environment: dict[str, Any]


def environment(spark: SparkSession, place: Place) -> dict[str, Any]:
    import pyspark

    return {
        "pyspark": pyspark.__version__,
        "delta_spark": importlib.metadata.version("delta-spark"),
        "deltalake": importlib.metadata.version("deltalake"),
        "spark_runtime": spark.version,
        "master": spark.sparkContext.master,
        "tables": place.describe()["tables"],
        "default_parallelism": spark.sparkContext.defaultParallelism,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
    }


def warm_up(lh: Lakehouse, work: Path, tiny: Path, place: Place, mode: Mode = CLEAN) -> None:
    """A tiny baseline and a tiny governed run: JVM/JIT/class loading charged to neither path."""
    apply_document(lh, tiny, mode)
    run_baseline(lh.spark, tiny, place.table(work / "warmup_baseline", "warmup"), mode)
    run_governed(lh, mode)


def measure(args: argparse.Namespace, work: Path, place: Place) -> Figures:
    mode = DIRTY if args.dirty else CLEAN
    lh = open_home(work / "home_warmup", place)
    spark = lh.spark
    tiny = ensure_data(spark, args.data, args.warmup_rows, args.partitions, mode)
    folder = ensure_data(spark, args.data, args.rows, args.partitions, mode)
    log(f"mode {mode.name}; warm-up (not measured)")
    warm_up(lh, work, tiny, place, mode)
    log(f"page cache warmed with {warm_page_cache(folder) / 1e6:.0f} MB of CSV")
    base_s: list[float] = []
    base_rows: list[int] = []
    governed: list[GovernedRound] = []
    for i in range(1, args.repeat + 1):
        target = place.table(work / "baseline" / f"round{i}", f"round{i}")
        base_s.append(run_baseline(spark, folder, target, mode))
        base_rows.append(baseline_rows_written(spark, target))
        log(f"round {i}: baseline {base_s[-1]:.2f}s")
        lh = open_home(work / f"home_round{i}", place)
        apply_document(lh, folder, mode)
        governed.append(run_governed(lh, mode))
        log(f"round {i}: governed {governed[-1].seconds:.2f}s")
    base_med = statistics.median(base_s)
    gov_s = [g.seconds for g in governed]
    gov_med = statistics.median(gov_s)
    ratio = gov_med / base_med
    log(f"step overhead: one-row batches ({args.overhead_rounds} rounds)")
    overhead, one_bare, one_governed = step_overhead(work, place, args.overhead_rounds, mode)
    log(f"step overhead {overhead:.2f}s")
    return Figures(
        mode=mode.name,
        rows=args.rows,
        rules=len(mode.rules),
        repeat=args.repeat,
        baseline_seconds=base_s,
        governed_seconds=gov_s,
        baseline_s=base_med,
        governed_s=gov_med,
        ratio=ratio,
        overhead_pct=(ratio - 1.0) * 100.0,
        step_overhead_s=overhead,
        one_row_baseline_seconds=one_bare,
        one_row_governed_seconds=one_governed,
        baseline_rows_written=base_rows,
        governed=governed,
        environment=environment(spark, place),
    )


# -- output -----------------------------------------------------------------------------------
def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def print_report(fig: Figures) -> None:
    env = fig.environment
    print(
        f"Spark {env['pyspark']} (runtime {env['spark_runtime']}), delta-spark "
        f"{env['delta_spark']}, master {env['master']}, tables on {env['tables']}, "
        f"{env['cores']} cores, "
        f"Python {env['python']}, {env['machine']}"
    )
    print(f"mode: {fig.mode}   rows: {fig.rows:,}   rules: {fig.rules}   rounds: {fig.repeat}")
    print(
        f"rows written: baseline {fig.baseline_rows_written}, "
        f"governed {[g.rows_written for g in fig.governed]}"
    )
    print(
        f"baseline  (read CSV + Delta append):   {fig.baseline_s:8.2f} s   "
        f"{_rounds(fig.baseline_seconds)}"
    )
    print(
        f"governed  (Lakehouse.run):             {fig.governed_s:8.2f} s   "
        f"{_rounds(fig.governed_seconds)}"
    )
    print(f"ratio governed/baseline: {fig.ratio:.2f}x   overhead: {fig.overhead_pct:+.0f} %")
    print(
        f"step overhead (one-row batch, governed - bare, median of "
        f"{len(fig.one_row_governed_seconds)}): {fig.step_overhead_s:.2f} s   "
        f"governed {_rounds(fig.one_row_governed_seconds)}; "
        f"bare {_rounds(fig.one_row_baseline_seconds)}"
    )
    for i, g in enumerate(fig.governed, 1):
        print(f"\ngoverned round {i} phases (lakeguard.step_logs, run {g.run_id}):")
        total_ms = g.seconds * 1000
        for p in g.phases:
            ms = p["duration_ms"] or 0
            print(
                f"  {p['step_name']:<44} {p['step_type']:<10} {ms:>8} ms "
                f"{100 * ms / total_ms:5.1f} %"
            )
        outside = total_ms - sum(p["duration_ms"] or 0 for p in g.phases)
        print(
            f"  {'(outside phases: lease, reaper, definitions, run logs)':<55} {outside:>8.0f} ms "
            f"{100 * outside / total_ms:5.1f} %"
        )
        print(f"governed round {i} timeline (progress messages, wall clock):")
        for seg in g.timeline:
            print(f"  {seg['segment']:<66} {seg['seconds']:>8.2f} s")


def _rounds(values: list[float]) -> str:
    return "" if len(values) < 2 else "rounds: " + ", ".join(f"{v:.2f}" for v in values)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=3_000_000, help="rows of lineitem")
    parser.add_argument("--repeat", type=int, default=1, help="alternating rounds of each path")
    parser.add_argument("--partitions", type=int, default=8, help="CSV files to generate")
    parser.add_argument("--warmup-rows", type=int, default=200_000, help="rows of the warm-up")
    parser.add_argument(
        "--overhead-rounds", type=int, default=5, help="one-row rounds of the step overhead"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary lakehouses")
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA_ROOT,
        metavar="DIR",
        help="where the generated CSV is kept and reused (default: bench/data)",
    )
    parser.add_argument(
        "--dirty",
        action="store_true",
        help="ingest a feed whose every file has rows failing three WARN rules (2/20/1 %%)",
    )
    add_place_flags(parser)
    add_flags(parser)
    args = parser.parse_args(argv)
    counts = (args.rows, args.repeat, args.partitions, args.warmup_rows, args.overhead_rounds)
    if min(counts) < 1:
        parser.error(
            "--rows, --repeat, --partitions, --warmup-rows and --overhead-rounds must be positive"
        )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from pyspark.sql import SparkSession

    # a session that was there before (the test suite's) is not this script's to stop
    borrowed = SparkSession.getActiveSession() is not None
    place = Place.of(args)
    work = Path(tempfile.mkdtemp(prefix="laketx-bench-"))
    log(f"work dir {work}")
    try:
        figures = measure(args, work, place)
    finally:
        active = SparkSession.getActiveSession()
        if active is not None and not borrowed:
            active.stop()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
            place.cleanup()
    if args.json:
        print(json.dumps(asdict(figures), indent=2, default=str))
    else:
        print_report(figures)
    record("governed_ingest", asdict(figures), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
