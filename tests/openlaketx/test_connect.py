"""The data plane through Spark Connect: `laketx connect-server` started by the test, a job
run through it with `--remote`, its results equal to a local run's; a file source through it;
what needs Delta's Connect plugins refused by name."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from openlaketx.tables import dataset_location
from tests.support.ports import free_ports
from tests.support.project import cells_yaml, open_copy, write
from tests.support.standalone import stop_group

# under xdist: one worker runs the module, so one Connect server serves both tests
pytestmark = [
    pytest.mark.spark,
    pytest.mark.subprocess,
    pytest.mark.server,
    pytest.mark.xdist_group("connect"),
]

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from openlaketx.cli import main; sys.argv = ['laketx', *sys.argv[1:]]; main()"
READY_WITHIN = 300.0  # seconds: a JVM and, on a fresh machine, the Delta jars resolved
SERVER_CONF = ("spark.driver.memory=1g", "spark.sql.shuffle.partitions=2")


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`laketx connect-server` on a free port, in a process group of its own; its sc:// URL."""
    folder = tmp_path_factory.mktemp("connect")
    (port,) = free_ports(1)
    conf = [item for c in SERVER_CONF for item in ("--conf", c)]
    log = (folder / "server.log").open("wb")
    laketx = [sys.executable, "-c", CLI, "--home", str(folder / "home"), "--master", "local[2]"]
    proc = subprocess.Popen(
        [*laketx, *conf, "connect-server", "--port", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + READY_WITHIN
        while True:
            if proc.poll() is not None:
                text = (folder / "server.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the Connect server ended ({proc.returncode}):\n{text}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break  # gRPC listens once the server's session is up
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Connect server on port {port} in {READY_WITHIN} s")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_group(proc)


def run_remote(
    home: Path, remote: str, target: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """`laketx run TARGET --remote REMOTE --json` in a child process (`env` added to its
    environment); its JSON result."""
    laketx = [sys.executable, "-c", CLI, "--home", str(home)]
    done = subprocess.run(
        [*laketx, "run", target, "--remote", remote, "--json"],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def orders_yaml(s: str, root: Path, silver: str = "") -> str:
    """Orders from a Delta table (a delta source) into bronze, merged into silver by id."""
    return f"""
source_systems:
  - {{id: lake{s}, kind: delta, options: {{root: "{root}"}}}}
source_objects:
  - id: orders{s}
    system: lake{s}
    locator: orders
    dataset: bronze_orders{s}
    columns: [{{name: id, type: bigint}}, {{name: amount, type: double}}]
datasets:
  - {{id: bronze_orders{s}, layer: bronze}}
  - {{id: silver_orders{s}, layer: silver, parents: [bronze_orders{s}], business_keys: [id]{silver}}}
jobs:
  - id: orders_job{s}
    tasks:
      - {{id: bronze, dataset: bronze_orders{s}}}
      - {{id: silver, dataset: silver_orders{s}, depends_on: [bronze]}}
  - id: bronze_job{s}
    tasks:
      - {{id: bronze, dataset: bronze_orders{s}}}
"""


def deliver(root: Path, ids: list[int], amounts: list[float]) -> None:
    """One more version of the source table (delta-rs appends it: no Spark)."""
    rows = pa.table({"id": pa.array(ids, pa.int64()), "amount": pa.array(amounts, pa.float64())})
    write_deltalake(str(root / "orders"), rows, mode="append")


def versions(lh: Any, *datasets: str) -> dict[str, list[tuple[int, int, str | None]]]:
    return {
        d: [(v.version, v.row_count, v.content_hash) for v in lh.reader.versions.versions(d)]
        for d in datasets
    }


def test_a_job_through_spark_connect_equals_the_same_job_run_locally(
    connect_server: str, spark: Any, template_home: Path, tmp_path: Path
) -> None:
    """Bronze from a Delta source and a silver merge, over two deliveries, run with
    `--remote sc://...` (no JVM in the client): every version of both datasets has the row
    count and content hash of a local run's."""
    s, root = "_sc", tmp_path / "src"
    doc = write(tmp_path / "orders.yaml", orders_yaml(s, root))
    remote = open_copy(template_home, tmp_path / "remote")
    local = open_copy(template_home, tmp_path / "local")
    for lh in (remote, local):
        lh.apply(doc)
    deliveries = (([1, 2, 3], [10.0, 20.0, 30.0]), ([2, 4], [21.0, 40.0]))
    for ids, amounts in deliveries:
        deliver(root, ids, amounts)
        result = run_remote(remote.config.home, connect_server, f"orders_job{s}")
        assert result["status"] == "COMPLETED", result
        assert local.run(f"orders_job{s}").status == "COMPLETED"

    through_connect = versions(remote, f"bronze_orders{s}", f"silver_orders{s}")
    assert through_connect == versions(local, f"bronze_orders{s}", f"silver_orders{s}")
    assert [len(v) for v in through_connect.values()] == [2, 2]
    assert through_connect[f"silver_orders{s}"][-1][1] == 4  # id 2 merged, 4 added
    assert all(hash_ for vs in through_connect.values() for _, _, hash_ in vs)


def test_a_file_source_runs_through_connect_and_a_spark_merge_is_refused_by_name(
    connect_server: str, spark: Any, template_home: Path, tmp_path: Path
) -> None:
    """A CSV file source (listed, its header read and its files archived without a JVM) runs
    through Connect, and so does a small scd2 merge (delta-rs, in the client); a Spark MERGE
    (here a catch-up's, two parent versions folded at once, with delta-rs's merges turned off:
    Delta's DeltaTable API, whose Connect plugins the server lacks) ends its step FAILED with
    an error naming the part, and makes no version; the same small catch-up, folded through
    Connect and merged by delta-rs, completes."""
    from openlaketx.lakehouse import Lakehouse

    lh: Lakehouse = open_copy(template_home, tmp_path / "lake")
    cells = write(tmp_path / "cells" / "cells.yaml", cells_yaml("_scf"))
    write(tmp_path / "cells" / "feed" / "incoming" / "a.csv", "radio,cell,lat,updated\nGSM,1,1,1\n")
    root = tmp_path / "src"
    scd2 = orders_yaml("_scd", root, silver=", load_type: scd2")
    lh.apply(cells)
    lh.apply(write(tmp_path / "orders.yaml", scd2))
    deliver(root, [1, 2], [10.0, 20.0])

    files = run_remote(lh.config.home, connect_server, "cells_job_scf")
    assert files["status"] == "COMPLETED", files
    (bronze,) = lh.reader.versions.versions("bronze_cells_scf")
    assert bronze.row_count == 1 and bronze.content_hash
    # the first batch into an empty table is published, not merged: run it here, locally
    assert lh.run("orders_job_scd").status == "COMPLETED"
    deliver(root, [2, 3], [21.0, 30.0])
    small = run_remote(lh.config.home, connect_server, "orders_job_scd")
    assert small["status"] == "COMPLETED", small
    assert {step["status"] for step in small["steps"]} == {"SUCCESS"}
    assert [v.version for v in lh.reader.versions.versions("silver_orders_scd")] == [1, 2]
    for ids, amounts in (([3], [31.0]), ([4], [40.0])):  # two bronze versions silver lacks
        deliver(root, ids, amounts)
        assert lh.run("bronze_job_scd").status == "COMPLETED"
    spark_merges = {"LAKETX_SMALL_MERGE_ROWS": "0"}
    merged = run_remote(lh.config.home, connect_server, "orders_job_scd", spark_merges)
    steps = {step["dataset_id"]: step for step in merged["steps"]}
    assert steps["silver_orders_scd"]["status"] == "FAILED"
    assert (merged["error"] or "").startswith(
        "the Spark MERGE into silver_orders_scd cannot run through Spark Connect: it goes "
        "through Delta's DeltaTable API, which needs Delta's Connect plugins on the server"
    ), merged
    assert [v.version for v in lh.reader.versions.versions("silver_orders_scd")] == [1, 2]
    caught_up = run_remote(lh.config.home, connect_server, "orders_job_scd")
    assert caught_up["status"] == "COMPLETED", caught_up["error"]
    assert [v.version for v in lh.reader.versions.versions("silver_orders_scd")] == [1, 2, 3]
    table = DeltaTable(
        dataset_location(lh.warehouse, "silver.silver_orders_scd")
    ).to_pyarrow_table()
    current = sorted((r["id"], r["amount"]) for r in table.to_pylist() if r["is_current"])
    assert current == [(1, 10.0), (2, 21.0), (3, 31.0), (4, 40.0)]
    assert table.num_rows == 6  # and the versions ids 2 and 3 had before
