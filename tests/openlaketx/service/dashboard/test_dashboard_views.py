"""Failures in sight, one outcome vocabulary, every run reachable and errors as pages (issue 45),
without a browser and without Spark: a store of job runs recorded as the engine records them
(`bench/recorded_history.py`), some PROMOTED, some HELD, some FAILED with a task SKIPPED."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from starlette.testclient import TestClient
from typer.testing import CliRunner

from lakeguard.actors.keys import Scope
from lakeguard.records.runs.rows import PipelineRunRow, RunHistoryRow, StepLogRow
from lakeguard.words.vocabulary import JobStatus, StepStatus
from openlaketx import outcomes
from openlaketx.cli import app as cli
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.service import run_views
from openlaketx.service.api.runs import summary as api_summary
from openlaketx.service.app import create_app
from openlaketx.service.dashboard import pages
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants
from tests.openlaketx.service.dashboard.test_dashboard_pages import _bench_history, login
from tests.support.project import cells_yaml, write

RUNS = 40
HTML = {"Accept": "text/html,application/xhtml+xml"}
XSS = '<script>alert("x")</script>'


@dataclass
class Site:
    client: TestClient
    tenants: Tenants
    lh: Lakehouse
    token: str
    home: Path


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    lh = tenants.get("default")
    for p in ("_p00", "_p01"):
        lh.apply(write(tmp_path / p / "cells.yaml", cells_yaml(p)))
    history = _bench_history()(lh.store, projects=2, runs=RUNS, seed=7)
    lh.store.append_rows([row for i in range(RUNS) for row in history.run(i)], _by_gate=True)
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    runs = RunService(tenants, workers=1)
    with TestClient(create_app(runs), follow_redirects=False) as client:
        login(client, token)
        yield Site(client, tenants, lh, token, tmp_path / "lakehouse")
    runs.drain(30)


def ended(lh: Lakehouse) -> list[PipelineRunRow]:
    return lh.store.read(PipelineRunRow)


def of_status(lh: Lakehouse, status: JobStatus) -> list[PipelineRunRow]:
    found = [r for r in ended(lh) if r.status == status]
    assert found, f"the recorded history has no {status} run"
    return found


def row_of(text: str, attr: str, value: str) -> str:
    """The <tr> of a page whose `attr` is `value` (its whole markup)."""
    found = re.search(rf'<tr {attr}="{re.escape(value)}"[^>]*>.*?</tr>', text, re.S)
    assert found is not None, (attr, value)
    return found.group(0)


def outcome_attr(markup: str) -> str:
    found = re.search(r'data-outcome="([^"]*)"', markup)
    assert found is not None, markup
    return found.group(1)


# 2. one vocabulary ----------------------------------------------------------------------------


def test_the_cli_the_api_and_the_pages_say_held_for_a_held_run(site: Site) -> None:
    held = of_status(site.lh, JobStatus.BLOCKED)[-1]
    run_id = held.pipeline_logging_id
    # its gate step as the runner logs it: BLOCKED in step_logs
    site.lh.store.append_rows(
        [
            StepLogRow(
                pipeline_logging_id=run_id,
                tenant_id=site.lh.store.tenant,
                step_name="gate",
                step_type="gate",
                step_index=9,
                status=StepStatus.BLOCKED,
                start_time=held.start_time,
                end_time=held.end_time,
            )
        ],
        _by_gate=True,
    )
    home = ["--home", str(site.home)]
    listed = CliRunner().invoke(cli, [*home, "runs", "--limit", str(RUNS), "--json"])
    assert listed.exit_code == 0, listed.output
    (said,) = [r for r in json.loads(listed.stdout) if r["pipeline_logging_id"] == run_id]
    assert said["outcome"] == "HELD" and said["status"] == "BLOCKED"  # the stored word kept
    table = CliRunner().invoke(cli, [*home, "runs", "--limit", str(RUNS)])
    assert "HELD" in table.output and "BLOCKED" not in table.output
    # `laketx status` says each dataset's last outcome as the overview does
    shown = json.loads(CliRunner().invoke(cli, [*home, "status", "--json"]).stdout)
    overview = site.client.get("/").text
    for row in shown:
        assert row["last_outcome"] == outcomes.word_of(row["last_status"])
        line = row_of(overview, "data-dataset", row["dataset_id"])
        assert f'data-outcome="{row["last_outcome"]}"' in line
    status_table = CliRunner().invoke(cli, [*home, "status"]).output
    assert "BLOCKED" not in status_table and "SUCCESS" not in status_table
    record = site.lh.reader.runs.job_run(run_id)
    assert record is not None and api_summary(record).outcome == "HELD"
    tasks = run_views.run_tasks(site.lh, record, site.lh.reader.runs.attempts(run_id))
    assert [t.outcome for t in run_views.task_rows(tasks)] == ["HELD", "SKIPPED"]
    assert f'data-run="{run_id}" data-outcome="HELD"' in overview  # the timeline's bar
    listed_page = site.client.get("/runs").text
    assert outcome_attr(row_of(listed_page, "data-run", run_id)) == "HELD"
    page = site.client.get(f"/runs/{run_id}").text
    status = re.search(r'data-testid="run-status">(.*?)</p>', page, re.S)
    assert status is not None and 'data-outcome="HELD"' in status.group(1)
    assert "BLOCKED" not in page and "COMPLETED" not in page  # the gate step says HELD too
    assert page.count('data-outcome="HELD"') >= 3  # the run, its held task, its gate step


def test_the_api_route_says_held_for_a_held_run(site: Site) -> None:
    held = of_status(site.lh, JobStatus.BLOCKED)[-1].pipeline_logging_id
    api = {"Authorization": f"Bearer {site.token}"}
    answer = site.client.get(f"/api/v1/runs/{held}", headers=api).json()
    assert answer["outcome"] == "HELD" and answer["status"] == "BLOCKED"
    assert [t["outcome"] for t in answer["tasks"]] == ["HELD", "SKIPPED"]


def test_the_api_filters_and_pages_runs_as_the_runs_page_does(site: Site) -> None:
    api = {"Authorization": f"Bearer {site.token}"}
    held = {r.pipeline_logging_id for r in of_status(site.lh, JobStatus.BLOCKED)}
    seen: list[str] = []
    params: dict[str, str] = {"outcome": "held", "limit": "3"}
    for _ in range(50):  # every held run once, by the cursor each page gives
        page = site.client.get("/api/v1/runs", params=params, headers=api).json()
        assert all(r["outcome"] == "HELD" for r in page["runs"])
        seen += [r["run_id"] for r in page["runs"]]
        if page["next_after"] is None:
            break
        params = {"outcome": "held", "limit": "3", "after": page["next_after"]}
    assert sorted(seen) == sorted(held) and len(seen) == len(set(seen))
    job = next(iter(of_status(site.lh, JobStatus.FAILED))).pipeline_id
    mine = site.client.get("/api/v1/runs", params={"job": job, "limit": 100}, headers=api)
    assert {r["job_id"] for r in mine.json()["runs"]} == {job}
    bad = site.client.get("/api/v1/runs", params={"outcome": "WARN"}, headers=api)
    assert bad.status_code == 422 and bad.headers["content-type"].startswith(
        "application/problem+json"
    )
    forged = site.client.get("/api/v1/runs", params={"after": "x~y"}, headers=api)
    assert forged.status_code == 422


# 1. failures in sight -------------------------------------------------------------------------


def test_a_failed_run_page_shows_each_task_the_skipped_one_and_the_error(site: Site) -> None:
    failed = of_status(site.lh, JobStatus.FAILED)[0]
    job = failed.pipeline_id
    page = site.client.get(f"/runs/{failed.pipeline_logging_id}").text
    assert "No step finished yet." not in page
    bronze = row_of(page, "data-task", job.replace("cells_job", "bronze_cells"))
    assert outcome_attr(bronze) == "FAILED" and "bench: a planted failure" in bronze
    silver = row_of(page, "data-task", job.replace("cells_job", "silver_cells"))
    assert outcome_attr(silver) == "SKIPPED" and "did not succeed" in silver
    # a run that failed before any task began (a lease it could not take): each task FAILED
    # with the run's error, not SKIPPED (nothing it depends on failed)
    lone = replace(failed, pipeline_logging_id="f" * 32, error_message="not started: datasets held")
    site.lh.store.append_rows([lone], _by_gate=True)
    page = site.client.get("/runs/" + "f" * 32).text
    assert "No step finished yet." not in page and "No phase was logged" in page
    for layer in ("bronze", "silver"):
        task = row_of(page, "data-task", job.replace("cells_job", f"{layer}_cells"))
        assert outcome_attr(task) == "FAILED" and "datasets held" in task
    bronze_page = site.client.get(f"/datasets/{job.replace('cells_job', 'bronze_cells')}").text
    lone_row = row_of(bronze_page, "data-run", "f" * 32)
    assert outcome_attr(lone_row) == "FAILED" and "before any task began" in lone_row


def test_a_dataset_page_lists_its_attempts_failed_and_skipped_each_linked(site: Site) -> None:
    lh = site.lh
    failed = of_status(lh, JobStatus.FAILED)
    job = failed[-1].pipeline_id
    bronze, silver = (job.replace("cells_job", f"{layer}_cells") for layer in ("bronze", "silver"))
    page = site.client.get(f"/datasets/{bronze}").text
    section = page[page.index('data-testid="attempts"') :]
    section = section[: section.index("</section>")]
    attempts = sorted(
        lh.store.read(RunHistoryRow, filters=[("dataset_id", "=", bronze)]),
        key=lambda r: (r.start_time, r.pipeline_logging_id),
        reverse=True,
    )[: pages.LISTED]
    shown = re.findall(r'<tr data-run="([0-9a-f]{32})"', section)
    assert shown == [a.pipeline_logging_id for a in attempts]  # newest first, each once
    words = {a.pipeline_logging_id: outcomes.word_of(a.status) for a in attempts}
    assert {"PROMOTED", "FAILED"} <= set(words.values())
    for a in attempts:
        row = row_of(section, "data-run", a.pipeline_logging_id)
        assert outcome_attr(row) == words[a.pipeline_logging_id]
        assert f'href="/runs/{a.pipeline_logging_id}"' in row
        if a.error_message:
            assert html.escape(a.error_message) in row
    # silver was never attempted in bronze's failed or held runs: SKIPPED, linked to the run
    page = site.client.get(f"/datasets/{silver}").text
    mine = [r for r in failed if r.pipeline_id == job]
    skipped = [r for r in mine if f'data-run="{r.pipeline_logging_id}"' in page]
    assert skipped, "no failed run of the silver dataset's job is listed"
    for r in skipped:
        row = row_of(page, "data-run", r.pipeline_logging_id)
        assert outcome_attr(row) == "SKIPPED" and f'href="/runs/{r.pipeline_logging_id}"' in row
    assert f'href="/runs?job={job}"' in page  # all the runs of its job


# 3. every run reachable -----------------------------------------------------------------------


def walk(client: TestClient, path: str) -> list[str]:
    """Every run id from `path` on, following the Older links to the end."""
    seen: list[str] = []
    for _ in range(100):
        answer = client.get(path)
        assert answer.status_code == 200, answer.text
        seen += re.findall(r'<tr data-run="([0-9a-f]{32})"', answer.text)
        older = re.search(r'<a href="(/runs\?[^"]*)" rel="next"', answer.text)
        if older is None:
            return seen
        path = html.unescape(older.group(1))
    raise AssertionError("the pages never end")


def test_the_runs_page_reaches_every_run_once_in_a_stable_order_ties_too(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh = site.lh
    monkeypatch.setattr(pages, "RUNS_PAGE", 7)
    # twelve runs started at the very same time, straddling the edge of a page
    first = sorted(ended(lh), key=lambda r: r.start_time)[RUNS - 10]
    twins = [
        replace(first, pipeline_logging_id=f"{i:02d}" + "a" * 30, error_message=None)
        for i in range(12)
    ]
    lh.store.append_rows(twins, _by_gate=True)
    expected = [
        r.pipeline_logging_id
        for r in sorted(ended(lh), key=lambda r: (r.start_time, r.pipeline_logging_id))[::-1]
    ]
    assert len(expected) == RUNS + 12
    seen = walk(site.client, "/runs")
    assert seen == expected  # each once, newest first, ties by run id
    assert "/runs" in site.client.get("/").text and 'data-testid="all-runs"' in (
        site.client.get("/").text
    )


def test_the_runs_page_filters_by_job_outcome_trigger_and_time(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh = site.lh
    monkeypatch.setattr(pages, "RUNS_PAGE", 6)
    rows = ended(lh)

    def ids(where: Any) -> list[str]:
        return [
            r.pipeline_logging_id
            for r in sorted(rows, key=lambda r: (r.start_time, r.pipeline_logging_id))[::-1]
            if where(r)
        ]

    assert walk(site.client, "/runs?job=cells_job_p01") == ids(
        lambda r: r.pipeline_id == "cells_job_p01"
    )
    held = walk(site.client, "/runs?outcome=HELD")
    assert held == ids(lambda r: r.status == JobStatus.BLOCKED) and held
    assert walk(site.client, "/runs?outcome=failed&job=cells_job_p00") == ids(
        lambda r: r.status == JobStatus.FAILED and r.pipeline_id == "cells_job_p00"
    )
    assert walk(site.client, "/runs?trigger=api") == ids(lambda r: r.trigger_type == "api")
    times = sorted(r.start_time for r in rows)
    since, until = times[5], times[20]
    window = walk(
        site.client,
        f"/runs?since={since.isoformat().replace('+', '%2B')}"
        f"&until={until.isoformat().replace('+', '%2B')}",
    )
    assert window == ids(lambda r: since <= r.start_time < until) and len(window) == 15
    assert walk(site.client, "/runs?outcome=RUNNING") == []  # none in flight
    # a word that is no outcome (a rule's WARN), a time that is none, a forged cursor
    for bad in ("outcome=WARN", "outcome=BLOCKED", "since=yesterday", "after=x~y"):
        answer = site.client.get(f"/runs?{bad}", headers=HTML)
        assert answer.status_code == 422, bad
        assert answer.headers["content-type"].startswith("text/html")
        assert "Not valid" in _title(answer.text) and "Error" not in _title(answer.text), bad


def test_the_runs_page_is_a_fixed_number_of_reads_whatever_it_shows(site: Site) -> None:
    lh = site.lh
    calls: list[str] = []
    real = type(lh.store).read

    def counting(self: Any, row_type: Any, **kw: Any) -> Any:
        calls.append(row_type.__name__)
        return real(self, row_type, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(lh.store), "read", counting)
        for limit in (3, 10, RUNS):
            calls.clear()
            found = run_views.runs_page(lh, run_views.RunFilter(), None, limit)
            assert len(found.runs) == limit and len(calls) <= 2, (limit, calls)
            if found.after is not None:  # a later page: the ties at its cursor, once more
                calls.clear()
                run_views.runs_page(lh, run_views.RunFilter(), found.after, limit)
                assert len(calls) <= 3, (limit, calls)
        for dataset in ("bronze_cells_p00", "silver_cells_p01"):
            calls.clear()
            run_views.dataset_attempts(lh, dataset, pages.LISTED)
            assert len(calls) <= 3, calls


def test_another_tenants_runs_are_never_on_the_runs_page(site: Site, tmp_path: Path) -> None:
    beta = site.tenants.get("beta")
    beta.apply(write(tmp_path / "beta" / "cells.yaml", cells_yaml("_b00")))
    history = _bench_history()(beta.store, projects=1, runs=5, seed=3, tag="b")
    beta.store.append_rows([row for i in range(5) for row in history.run(i)], _by_gate=True)
    theirs = {r.pipeline_logging_id for r in ended(beta)}
    assert len(theirs) == 5
    seen = set(walk(site.client, "/runs"))
    assert seen and not seen & theirs
    assert walk(site.client, "/runs?job=cells_job_b00") == []
    answer = site.client.get(f"/runs/{next(iter(theirs))}", headers=HTML)
    assert answer.status_code == 404 and "cells_job_b00" not in answer.text
    assert "cells_job_b00" not in site.client.get("/runs").text  # not even in the job list


def test_the_runs_page_escapes_what_runs_and_filters_carry(site: Site) -> None:
    lh = site.lh
    run = ended(lh)[0]
    lh.store.append_rows(
        [
            replace(
                run,
                pipeline_logging_id="e" * 32,
                error_message=XSS,
                trigger_by=XSS,
                start_time=run.start_time + timedelta(days=1),
            )
        ],
        _by_gate=True,
    )
    for path in ("/runs", "/runs?job=" + XSS.replace("<", "%3C").replace(">", "%3E"), "/"):
        text = site.client.get(path).text
        assert "<script>" not in text, path
    assert str(escape(XSS)) in site.client.get("/runs").text


# 4. errors as pages ---------------------------------------------------------------------------


def _title(text: str) -> str:
    found = re.search(r"<title>(.*?)</title>", text, re.S)
    assert found is not None
    return found.group(1)


def test_a_browser_gets_error_pages_and_an_api_client_problem_json(site: Site) -> None:
    client = site.client
    missing = client.get("/no/such/page", headers=HTML)
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("text/html")
    assert 'class="brand"' in missing.text  # the dashboard's layout
    assert _title(missing.text).startswith("Not found") and "/no/such/page" in missing.text
    assert "default-src 'self'" in missing.headers["content-security-policy"]
    api = client.get("/no/such/page", headers={"Accept": "application/json"})
    assert api.status_code == 404 and api.headers["content-type"] == "application/problem+json"
    under_api = client.get("/api/v1/no/such", headers=HTML)
    assert under_api.headers["content-type"] == "application/problem+json"
    bad = client.get("/datasets/bronze_cells_p00/versions/abc", headers=HTML)
    assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
    assert "version" in bad.text and "Not valid" in _title(bad.text)
    unknown = client.get("/datasets/no_such_dataset", headers=HTML)
    assert unknown.status_code == 404 and _title(unknown.text).startswith("Not found")
    for page in (missing, bad, unknown):
        text = page.text
        assert not re.search(r"\b\w+(Error|Exception)\b", _title(text)), _title(text)
        assert "NotRegisteredError" not in text and "HTTPException" not in text


def test_a_page_that_fails_answers_a_page_not_a_trace(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(run_views, "runs_page", broken)
    client = TestClient(site.client.app, raise_server_exceptions=False)
    client.cookies = site.client.cookies
    answer = client.get("/runs", headers=HTML)
    assert answer.status_code == 500 and answer.headers["content-type"].startswith("text/html")
    assert "Something went wrong" in _title(answer.text) and "secret internals" not in answer.text
    assert answer.headers["x-content-type-options"] == "nosniff"
    api = client.get("/runs", headers={"Accept": "application/json"})
    assert api.status_code == 500 and api.headers["content-type"] == "application/problem+json"
