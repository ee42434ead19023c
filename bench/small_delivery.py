"""A small delivery: what governance costs when a batch is a few hundred rows.

In one process and one warm SparkSession, each round delivers one CSV file of `--rows` orders
(half of them updates of earlier ids, half new) and times the same work three ways:

* **bare**: a PySpark script: ``spark.read.csv`` with the schema, a Delta append to bronze,
  then a Delta ``MERGE`` of those rows into silver by key;
* **governed**: ``Lakehouse.run`` of a job doing the same (bronze append, silver merge), with
  quality rules on both datasets: staging, rules, the gate, the versions and run records;
* **api**: the same job through the HTTP API of a `laketx serve` app (uvicorn on 127.0.0.1 in
  this process, sharing its Spark session), from the POST to the run's terminal status.

A one-row delivery is also timed, bare append against a governed bronze-only run: its
difference is the step overhead, the fixed cost of one governed step. The first round of each
kind is a warm-up and is not counted; figures are medians.

    .venv/bin/python bench/small_delivery.py                     # 200 rows, 5 rounds
    .venv/bin/python bench/small_delivery.py --rows 20 --rounds 2 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # bench/ is scripts: their shared modules by the repo's root
from bench.results import add_flags, record  # noqa: E402

SCHEMA = "id BIGINT, customer STRING, amount DOUBLE, updated BIGINT"
PROJECT = """
version: 1
source_systems:
  - id: shop
    options: {root: landing}
source_objects:
  - id: orders_csv
    system: shop
    locator: "incoming/*.csv"
    options: {header: "true"}
    dataset: bronze_orders
    columns:
      - {name: id, type: bigint}
      - {name: customer, type: string}
      - {name: amount, type: double}
      - {name: updated, type: bigint}
datasets:
  - id: bronze_orders
    layer: bronze
  - id: silver_orders
    layer: silver
    parents: [bronze_orders]
    load_type: merge
    business_keys: [id]
    sequence_by: updated
rules:
  - {id: amount_positive, dataset: bronze_orders, type: RANGE, column: amount, min: 0,
     severity: FAIL}
  - {id: customer_known, dataset: bronze_orders, type: NOT_NULL, columns: [customer],
     severity: WARN}
  - {id: order_unique, dataset: silver_orders, type: UNIQUE, columns: [id], severity: FAIL}
jobs:
  - id: orders_job
    tasks:
      - {id: ingest, dataset: bronze_orders}
      - {id: clean, dataset: silver_orders, depends_on: [ingest]}
"""


def log(message: str) -> None:
    print(f"[small] {message}", file=sys.stderr, flush=True)


def orders(first_id: int, rows: int, stamp: int) -> str:
    lines = [
        f"{i},c{i % 7},{(i * 13) % 500 + 0.5},{stamp}" for i in range(first_id, first_id + rows)
    ]
    return "id,customer,amount,updated\n" + "\n".join(lines) + "\n"


class Deliveries:
    """Files for the governed landing folder and the bare script, half updates, half new."""

    def __init__(self, work: Path, rows: int) -> None:
        self.incoming = work / "landing" / "incoming"
        self.incoming.mkdir(parents=True)
        self.bare = work / "bare_in"
        self.bare.mkdir()
        self.rows = rows
        self.n = 0

    def next(self, rows: int | None = None) -> tuple[Path, Path]:
        """One delivery as two identical files: the governed job's and the bare script's."""
        rows = rows or self.rows
        self.n += 1
        text = orders(self.n * max(rows // 2, 1), rows, self.n)
        name = f"orders_{self.n:04d}.csv"
        (self.bare / name).write_text(text)
        (self.incoming / name).write_text(text)
        return self.incoming / name, self.bare / name


def bare_round(spark: Any, csv: Path, bronze: str, silver: str, *, merge: bool = True) -> float:
    started = time.perf_counter()
    batch = spark.read.option("header", "true").schema(SCHEMA).csv(str(csv))
    batch.write.format("delta").mode("append").save(bronze)
    if merge:
        batch.createOrReplaceTempView("bare_batch")
        spark.sql(
            f"MERGE INTO delta.`{silver}` t USING bare_batch s ON t.id = s.id "
            "WHEN MATCHED AND s.updated >= t.updated THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *"
        )
        spark.catalog.dropTempView("bare_batch")
    return time.perf_counter() - started


def governed_round(lh: Any, target: str) -> float:
    started = time.perf_counter()
    result = lh.run(target, triggered_by="bench")
    seconds = time.perf_counter() - started
    if result.status != "COMPLETED":
        raise SystemExit(f"governed run of {target} ended {result.status}: {result.error}")
    return seconds


@contextlib.contextmanager
def served(home: Path) -> Iterator[tuple[str, str]]:
    """The `laketx serve` app on uvicorn in a thread of this process; (url, a key's token)."""
    import uvicorn

    from lakeguard.actors.keys import Scope
    from openlaketx.config import LakehouseConfig
    from openlaketx.service.app import create_app
    from openlaketx.service.runs import RunService
    from openlaketx.service.serve import server_config
    from openlaketx.service.tenants import Tenants

    tenants = Tenants(LakehouseConfig.from_env(home=home))
    runs = RunService(tenants, workers=2)
    _, token = tenants.keys.create("default", (Scope.RUNS_TRIGGER, Scope.RUNS_READ))
    server = uvicorn.Server(server_config(create_app(runs)))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", token
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        runs.drain(600)


def api_round(url: str, token: str) -> float:
    from bench.service_latency import trigger_to_terminal  # bench/ is on the path only now

    return trigger_to_terminal(url, token, "orders_job")


def medians(rounds: int, timed: Callable[[], float]) -> list[float]:
    timed()  # warm-up, not counted
    return [timed() for _ in range(rounds)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    add_flags(parser)
    args = parser.parse_args(argv)

    from openlaketx.lakehouse import Lakehouse

    work = Path(tempfile.mkdtemp(prefix="laketx-small-"))
    try:
        (work / "project.yaml").write_text(PROJECT)
        lh = Lakehouse.open(home=work / "home")
        lh.apply(work / "project.yaml")
        spark = lh.spark
        deliveries = Deliveries(work, args.rows)
        bronze, silver = str(work / "bare" / "bronze"), str(work / "bare" / "silver")
        spark.createDataFrame([], SCHEMA).write.format("delta").save(silver)

        def bare() -> float:
            return bare_round(spark, deliveries.next()[1], bronze, silver)

        def governed() -> float:
            deliveries.next()
            return governed_round(lh, "orders_job")

        log(f"{args.rows}-row deliveries, {args.rounds} rounds each")
        figures: dict[str, list[float]] = {
            "bare": medians(args.rounds, bare),
            "governed": medians(args.rounds, governed),
        }
        with served(work / "home") as (url, token):

            def api() -> float:
                deliveries.next()
                return api_round(url, token)

            figures["api"] = medians(args.rounds, api)

        def bare_one() -> float:
            return bare_round(spark, deliveries.next(1)[1], bronze, silver, merge=False)

        def governed_one() -> float:
            deliveries.next(1)
            return governed_round(lh, "bronze_orders")

        figures["bare_one_row"] = medians(args.rounds, bare_one)
        figures["governed_one_row"] = medians(args.rounds, governed_one)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    median = {k: statistics.median(v) for k, v in figures.items()}
    results = {
        "rows": args.rows,
        "rounds": args.rounds,
        "ratio": median["governed"] / median["bare"],
        "api_ratio": median["api"] / median["bare"],
        "step_overhead_s": median["governed_one_row"] - median["bare_one_row"],
        "median_s": median,
        "seconds": figures,
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"small delivery of {args.rows} rows (bronze append, silver merge), medians:")
        for name in ("bare", "governed", "api"):
            print(f"  {name:<9} {median[name]:6.2f} s")
        print(
            f"  governed / bare  {results['ratio']:.2f}x   api / bare  {results['api_ratio']:.2f}x"
        )
        print(
            f"one-row step: governed {median['governed_one_row']:.2f} s, bare "
            f"{median['bare_one_row']:.2f} s, overhead {results['step_overhead_s']:.2f} s"
        )
    record("small_delivery", results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
