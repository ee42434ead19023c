"""The data plane on a Spark standalone cluster: a master and a worker on 127.0.0.1 started
from the pyspark installation (tests/support/standalone.py), a job run on it through the CLI, its
results equal to the same deliveries run with a local master. The worker starts with no
`AWS_*` and no `LAKETX_*` variable, as on a machine nobody set up: a lakehouse on an object
store is reached by its executors with what the driver tells them alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project, cells_yaml, open_copy, write
from tests.support.seaweed import ACCESS_KEY, SECRET_KEY
from tests.support.standalone import Standalone, jvm_options, start, without_credentials

# one worker runs the module: its tests share one cluster (two JVMs to start)
pytestmark = [
    pytest.mark.spark,
    pytest.mark.subprocess,
    pytest.mark.server,
    pytest.mark.xdist_group("cluster"),
]

ROOT = Path(__file__).resolve().parents[2]
GOLD = """
  - id: gold_radios{s}
    layer: gold
    parents: [silver_cells{s}]
    sql: |
      SELECT radio, count(*) AS cells, max(lat) AS top_lat FROM silver_cells{s} GROUP BY radio
"""
CLI = "import sys; from openlaketx.cli import main; sys.argv = ['laketx', *sys.argv[1:]]; main()"
# small enough for a one-core, one-gigabyte worker and a busy machine
SMALL = ("spark.executor.memory=512m", "spark.driver.memory=1g", "spark.sql.shuffle.partitions=2")


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    cluster = start(
        tmp_path_factory.mktemp("standalone"), worker_env=without_credentials(os.environ)
    )
    yield cluster
    cluster.stop()


def three_layers(folder: Path, suffix: str) -> Project:
    """The cells project (bronze append from CSV files, silver merge) and a gold SQL model."""
    text = cells_yaml(suffix)
    head, jobs = text.split("rules:", 1)
    gold_task = f"      - {{id: gold, dataset: gold_radios{suffix}, depends_on: [clean]}}\n"
    text = head + GOLD.format(s=suffix).lstrip("\n") + "rules:" + jobs + gold_task
    return Project(write(folder / "cells.yaml", text), suffix)


def run_cli(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`laketx --home HOME --conf ... ARGS` in a process of its own (`env`, default this
    process's environment)."""
    executor = f"spark.executor.extraJavaOptions={jvm_options()}"
    conf = [item for c in (*SMALL, executor) for item in ("--conf", c)]
    return subprocess.run(
        [sys.executable, "-c", CLI, "--home", str(home), *conf, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def finished_since(cluster: Standalone, before: set[str]) -> list[dict[str, Any]]:
    """The applications the master lists as completed that were not in `before` (ids)."""
    return [a for a in cluster.state()["completedapps"] if a["id"] not in before]


def app_ids(cluster: Standalone) -> set[str]:
    return {a["id"] for a in cluster.state()["completedapps"]}


def versions(lh: Any, *datasets: str) -> dict[str, list[tuple[int, int, str | None]]]:
    """Every approved version of each dataset: (version, row count, content hash)."""
    return {
        d: [(v.version, v.row_count, v.content_hash) for v in lh.reader.versions.versions(d)]
        for d in datasets
    }


DELIVERIES = (
    ("d1.csv", ["GSM,1,10.5,1", "GSM,2,20.0,1", "LTE,3,30.0,1", "LTE,4,40.0,1"]),
    ("d2.csv", ["GSM,1,11.5,2", "LTE,5,50.0,2", "GSM,6,60.0,2"]),
)


def test_a_job_on_a_standalone_cluster_equals_the_same_job_on_a_local_master(
    standalone: Standalone, spark: Any, template_home: Path, tmp_path: Path
) -> None:
    """Bronze append, silver merge and a gold model over two deliveries, run through the CLI
    with `--master spark://127.0.0.1:PORT` (the engine sets the loopback driver address):
    every version of every dataset has the row count and content hash of a local run's, and
    the master lists the runs as its finished applications."""
    before = app_ids(standalone)
    project = three_layers(tmp_path / "project", "_cl")
    datasets = (project.bronze, project.silver, "gold_radios_cl")
    on_cluster = open_copy(template_home, tmp_path / "cluster")
    local = open_copy(template_home, tmp_path / "local")
    for lh in (on_cluster, local):
        lh.apply(project.yaml)

    for name, rows in DELIVERIES:
        project.deliver(name, rows)
        done = run_cli(
            on_cluster.config.home, "run", project.job, "--master", standalone.master_url
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        result = local.run(project.job)
        assert result.status == "COMPLETED", result.error

    cluster_versions = versions(on_cluster, *datasets)
    assert cluster_versions == versions(local, *datasets)
    assert [len(v) for v in cluster_versions.values()] == [2, 2, 2]
    assert all(hash_ for vs in cluster_versions.values() for _, _, hash_ in vs)
    assert cluster_versions[project.silver][-1][1] == 6  # cell 1 merged, 5 and 6 added
    finished = finished_since(standalone, before)
    assert [(a["name"], a["state"]) for a in finished] == [("laketx", "FINISHED")] * 2


def test_a_job_on_s3_through_a_worker_without_credentials_equals_a_local_run(
    standalone: Standalone,
    s3_server: Any,
    spark: Any,
    template_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Warehouse and metadata on SeaweedFS, the credentials in a file the driver names by
    reference (LAKETX_S3_CREDENTIALS_FILE), a worker whose environment holds no credential:
    bronze append from CSV and silver merge over two deliveries through the CLI with
    `--master spark://...` equal a local run, version by version, and the executors
    authenticated with nothing but the file's path and section (no key in the job's conf)."""
    before = app_ids(standalone)
    worker = standalone.procs[-1].pid
    environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
    assert not [v for v in environ if v.startswith((b"AWS_", b"LAKETX_"))]
    project = Project(write(tmp_path / "project" / "cells.yaml", cells_yaml("_s3cl")), "_s3cl")
    local = open_copy(template_home, tmp_path / "local")
    local.apply(project.yaml)
    prefix = s3_server.fresh_prefix()
    # the driver's settings (the CLI's): the server, its credentials file, the lakehouse
    on_store = {
        **s3_server.env(),
        "LAKETX_METADATA_HOME": f"{prefix}/metadata",
        "LAKETX_WAREHOUSE": f"{prefix}/warehouse",
    }
    driver_env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | on_store
    home = tmp_path / "home"
    applied = run_cli(home, "apply", str(project.yaml), env=driver_env)
    assert applied.returncode == 0, applied.stdout[-2000:] + applied.stderr[-3000:]

    for name, rows in DELIVERIES:
        project.deliver(name, rows)
        done = run_cli(home, "run", project.job, "--master", standalone.master_url, env=driver_env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        result = local.run(project.job)
        assert result.status == "COMPLETED", result.error

    from openlaketx.lakehouse import Lakehouse

    for name, value in on_store.items():  # to read what the runs recorded on the server
        monkeypatch.setenv(name, value)
    on_s3 = Lakehouse.open(home=home)
    assert on_s3.config.uses_object_store
    cluster_versions = versions(on_s3, project.bronze, project.silver)
    assert cluster_versions == versions(local, project.bronze, project.silver)
    assert [len(v) for v in cluster_versions.values()] == [2, 2]
    assert cluster_versions[project.silver][-1][1] == 6
    base = prefix.removeprefix("s3://")
    keys = s3_server.keys_under(f"{prefix}/warehouse")
    assert any(k.startswith(f"{base}/warehouse/silver/cells_s3cl/_delta_log/") for k in keys)
    finished = finished_since(standalone, before)
    assert [(a["name"], a["state"]) for a in finished] == [("laketx", "FINISHED")] * 2
    # what the executors were started with: the file by reference, never a key
    for app in finished:
        (log,) = standalone.folder.glob(f"work/{app['id']}/*/stderr")
        launched = log.read_text(errors="replace").split("\n=====", 1)[0]
        assert f"-Daws.sharedCredentialsFile={s3_server.credentials_file}" in launched
        assert SECRET_KEY not in launched and ACCESS_KEY not in launched


def test_the_benches_run_on_the_cluster_with_every_table_on_s3(
    standalone: Standalone, s3_server: Any, tmp_path: Path
) -> None:
    """`bench/big_merge.py --master spark://... --s3 s3://...`, as docs/cluster.md says to
    measure where users run: both jobs on the cluster, the governed lakehouse and the bare
    table on the object store, its figures recorded with the place, and nothing left there."""
    before = app_ids(standalone)
    prefix = s3_server.fresh_prefix()
    conf = ";".join([*SMALL, f"spark.executor.extraJavaOptions={jvm_options()}"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env |= {**s3_server.env(), "LAKETX_SPARK_CONF": conf}
    argv = ["--rows", "200", "--changes", "20", "--rounds", "1", "--warmup-rounds", "0"]
    place = ["--master", standalone.master_url, "--s3", prefix]
    done = subprocess.run(
        [sys.executable, "bench/big_merge.py", *argv, *place, "--json", "--results", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    figures = json.loads(done.stdout)
    assert figures["master"] == standalone.master_url
    assert figures["tables"] == f"s3 ({prefix})"
    assert figures["governed_s"] > 0 and figures["bare_s"] > 0
    (recorded,) = (tmp_path / "big_merge").glob("*.json")
    assert json.loads(recorded.read_text())["figures"]["tables"] == figures["tables"]
    assert [a["state"] for a in finished_since(standalone, before)] == ["FINISHED"]
    assert s3_server.keys_under(prefix) == []  # the run's tables are removed after it
