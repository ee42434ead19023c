"""The data plane on a Spark standalone cluster: a master and a worker on 127.0.0.1 started
from the pyspark installation (tests/standalone.py), a job run on it through the CLI, its
results equal to the same deliveries run with a local master."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project, cells_yaml, open_copy, write
from tests.standalone import Standalone, jvm_options, start

pytestmark = [pytest.mark.spark, pytest.mark.subprocess, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[1]
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
    cluster = start(tmp_path_factory.mktemp("standalone"))
    yield cluster
    cluster.stop()


def three_layers(folder: Path, suffix: str) -> Project:
    """The cells project (bronze append from CSV files, silver merge) and a gold SQL model."""
    text = cells_yaml(suffix)
    head, jobs = text.split("rules:", 1)
    gold_task = f"      - {{id: gold, dataset: gold_radios{suffix}, depends_on: [clean]}}\n"
    text = head + GOLD.format(s=suffix).lstrip("\n") + "rules:" + jobs + gold_task
    return Project(write(folder / "cells.yaml", text), suffix)


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    executor = f"spark.executor.extraJavaOptions={jvm_options()}"
    conf = [item for c in (*SMALL, executor) for item in ("--conf", c)]
    return subprocess.run(
        [sys.executable, "-c", CLI, "--home", str(home), *conf, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def versions(lh: Any, *datasets: str) -> dict[str, list[tuple[int, int, str | None]]]:
    """Every approved version of each dataset: (version, row count, content hash)."""
    return {
        d: [(v.version, v.row_count, v.content_hash) for v in lh.reader.versions(d)]
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
    finished = [a for a in standalone.state()["completedapps"] if a["name"] == "laketx"]
    assert len(finished) == len(DELIVERIES)
    assert all(a["state"] == "FINISHED" for a in finished)
