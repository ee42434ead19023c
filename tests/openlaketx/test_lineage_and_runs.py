"""OpenLineage events (file transport, and http against a real server the test starts), runs
with nothing new decided with no Java at all, tenants in folders of their own, and a reaped
run that keeps its trigger."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lakeguard.records.runs.rows import RunEventRow
from lakeguard.store import RunWriter
from lakeguard.words.vocabulary import EventStatus
from openlaketx.runner.reaper import reap
from tests.openlaketx.cli.test_no_jvm import BIN, no_java_env
from tests.support.project import Project

pytestmark = pytest.mark.spark


def events_of(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def check_step_events(events: list[dict[str, Any]], p: Project) -> None:
    by_job: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_job.setdefault(e["job"]["name"], []).append(e)
    bronze = by_job[p.bronze]
    assert [e["eventType"] for e in bronze] == ["START", "COMPLETE"]
    assert bronze[0]["run"]["runId"] == bronze[1]["run"]["runId"]
    end = bronze[1]
    (output,) = end["outputs"]
    assert output["name"] == f"bronze.cells{p.suffix}"
    assertions = output["facets"]["dataQualityAssertions"]["assertions"]
    assert {a["assertion"] for a in assertions} >= {f"lat_range{p.suffix}"}
    assert output["facets"]["dataQualityMetrics"]["rowCount"] == 2
    decision = end["run"]["facets"]["laketx_decision"]
    assert decision["allowed"] is True and decision["version"] == 1
    assert 0 <= decision["trust"] <= 100
    assert [i["name"] for i in end["inputs"]] == [f"cells{p.suffix}_csv"]
    silver = by_job[p.silver]
    assert [i["name"] for i in silver[1]["inputs"]] == [f"{p.bronze}@v1"]


def test_each_step_emits_lineage_through_the_file_transport(
    shared_lakehouse: Any, project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, p = shared_lakehouse, project
    log = tmp_path / "lineage.jsonl"
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "file")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__LOG_FILE_PATH", str(log))
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__APPEND", "true")
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    assert lh.run(p.job).status == "COMPLETED"
    check_step_events(events_of(log.read_text().splitlines()), p)
    # a blocked step is no COMPLETE that looks fine
    p.deliver("d2.csv", ["GSM,3,999.0,2"])
    assert lh.run(p.bronze).status == "BLOCKED"
    last = events_of(log.read_text().splitlines())[-1]
    assert last["eventType"] == "FAIL" and last["job"]["name"] == p.bronze
    assert last["run"]["facets"]["laketx_decision"]["allowed"] is False
    assert last["run"]["facets"]["errorMessage"]["message"].startswith("blocked by the gate")


@pytest.fixture
def collector() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # polled often: `shutdown` waits for the next poll (0.5 s by default)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()


def test_lineage_reaches_an_http_endpoint(
    shared_lakehouse: Any,
    project: Project,
    collector: tuple[str, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, received = collector
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "http")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__URL", url)
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    assert lh.run(p.job).status == "COMPLETED"
    deadline = time.monotonic() + 30
    while len(received) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    check_step_events(received, p)


@pytest.mark.subprocess
def test_a_run_with_nothing_new_needs_no_java_and_a_reaped_run_keeps_its_trigger(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    assert lh.run(p.job).status == "COMPLETED"
    env = no_java_env()
    env.pop("OPENLINEAGE__TRANSPORT__TYPE", None)
    done = subprocess.run(
        [str(BIN / "laketx"), "--home", str(lh.config.home), "run", p.job, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "COMPLETED"
    assert [s["reason"] for s in result["steps"]] == [
        f"no new file at {p.incoming}/*.csv",
        f"no new approved version of {p.bronze}",
    ]
    # what a person sees (stderr piped: one line per step) never says Spark starts when it
    # does not; `runs --json` says for each run whether it retries one or is a tick's
    laketx = [str(BIN / "laketx"), "--home", str(lh.config.home)]
    said = subprocess.run(
        [*laketx, "run", p.job], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert said.returncode == 0 and "starting Spark" not in said.stderr, said.stderr
    listed = subprocess.run(
        [*laketx, "runs", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    runs = json.loads(listed.stdout)
    assert runs and all({"retry_of", "scheduled_for"} <= set(r) for r in runs)
    # a run that died in flight is reaped FAILED with the trigger it started with
    RunWriter(lh.store).append(
        [
            RunEventRow(
                run_id="e" * 32,
                pipeline_logging_id="e" * 32,
                pipeline_id=p.job,
                tenant_id=lh.store.tenant,
                status=EventStatus.RUNNING,
                event_time=lh.store.now(),
                worker_instance=f"{os.uname().nodename}:999999",  # no such process
                trigger_type="scheduler",
                triggered_by="schedule '0 * * * *' (UTC)",
            )
        ]
    )
    assert "e" * 32 in reap(lh.store)
    (reaped,) = [r for r in lh.runs(50) if r.pipeline_logging_id == "e" * 32]
    assert reaped.status == "FAILED" and reaped.trigger_type == "scheduler"
    assert reaped.triggered_by == "schedule '0 * * * *' (UTC)"


def test_each_tenant_has_its_own_namespace_and_warehouse(tmp_path: Path) -> None:
    from openlaketx.config import LakehouseConfig

    base = LakehouseConfig.from_env(home=tmp_path / "home")
    acme = base.for_tenant("acme")
    assert base.metadata_root == tmp_path / "home" / "metadata" / "lakeguard"
    assert acme.metadata_root == tmp_path / "home" / "tenants" / "acme" / "metadata" / "lakeguard"
    assert acme.warehouse == str(tmp_path / "home" / "tenants" / "acme" / "warehouse")
    assert acme.control_location == base.metadata_location  # every tenant's keys in one place
    from lakeguard.words.errors import ConfigError

    for bad in ("../x", "Acme", "a/b", ""):
        with pytest.raises(ConfigError):
            base.for_tenant(bad)
