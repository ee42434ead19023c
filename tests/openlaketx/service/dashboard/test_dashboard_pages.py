"""The dashboard's pages without a browser and without Spark: every page renders from the
metadata alone (no page starts Spark), loads nothing from another host, and the session cookie,
its CSRF token, logout and a revoked key behave as docs/dashboard.md says."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lakeguard.actors.keys import Scope
from openlaketx.config import LakehouseConfig
from openlaketx.service.app import create_app
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants
from tests.support.project import cells_yaml, write

S = "_pages"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, Tenants, str]]:
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    tenants.get("default").apply(write(tmp_path / "p" / "cells.yaml", cells_yaml(S)))
    runs = RunService(tenants, workers=1)
    _, token = tenants.keys.create("default", (Scope.RUNS_READ, Scope.RUNS_TRIGGER))
    with TestClient(create_app(runs), follow_redirects=False) as client:
        yield client, tenants, token
    runs.drain(30)


def login_csrf(client: TestClient) -> str:
    """The login form's token, as a browser reads the page (its cookie kept by the client)."""
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert found is not None
    return found.group(1)


def post_login(client: TestClient, token: str) -> Any:
    return client.post("/login", data={"key": token, "csrf": login_csrf(client)})


def login(client: TestClient, token: str) -> str:
    answer = post_login(client, token)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    (cookie,) = [c for c in answer.headers.get_list("set-cookie") if "laketx_session=" in c]
    return cookie


def test_every_page_renders_from_metadata_alone_and_loads_nothing_from_elsewhere(
    site: tuple[TestClient, Tenants, str],
) -> None:
    client, tenants, token = site
    login(client, token)
    pages = [
        "/",
        f"/datasets/bronze_cells{S}",
        f"/datasets/silver_cells{S}",
        "/lineage",
        "/lineage?focus=&depth=2",
        f"/lineage?focus=dataset:silver_cells{S}&depth=1",
    ]
    for path in pages:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        assert "default-src 'self'" in answer.headers["content-security-policy"]
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", answer.text), path
    assert client.get("/static/dash.css").status_code == 200
    assert not tenants.get("default").spark_started


def test_the_cookie_is_a_session_id_and_a_form_needs_its_csrf_token(
    site: tuple[TestClient, Tenants, str],
) -> None:
    client, tenants, token = site
    cookie = login(client, token)
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and token not in cookie
    refused = client.post(f"/jobs/cells_job{S}/runs", data={"csrf": "guessed"})
    assert refused.status_code == 401
    assert tenants.get("default").reader.runs.job_runs(10) == []  # nothing started
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/").text)
    assert csrf is not None
    client.post("/logout", data={"csrf": csrf.group(1)})
    assert client.get("/").headers["location"] == "/login"


def test_a_revoked_key_ends_its_sessions_and_a_bad_key_gets_no_cookie(
    site: tuple[TestClient, Tenants, str],
) -> None:
    client, tenants, token = site
    bad = post_login(client, "ltx_not_a_key")
    assert bad.status_code == 401 and "laketx_session" not in bad.headers.get("set-cookie", "")
    login(client, token)
    assert client.get("/").status_code == 200
    (key,) = tenants.keys.list("default")
    tenants.keys.revoke(key.api_key_id)
    assert client.get("/").headers["location"] == "/login"


def test_failed_logins_are_braked_with_a_page_that_says_how_long_to_wait(
    site: tuple[TestClient, Tenants, str],
) -> None:
    client, _, _ = site
    answers = [post_login(client, "ltx_not_a_key") for _ in range(12)]
    assert answers[0].status_code == 401 and answers[-1].status_code == 429
    assert int(answers[-1].headers["retry-after"]) > 0
    assert answers[-1].headers["content-type"].startswith("text/html")
    assert "too many failed authentications" in answers[-1].text


def test_every_template_compiles() -> None:
    from openlaketx.service.dashboard.state import _environment

    env = _environment()
    names = env.list_templates()
    assert "decision.html" in names and "run.html" in names
    for name in names:
        env.get_template(name)  # a syntax error raises here, not only when a page is asked


def _bench_history() -> Any:
    """The benchmarks' History (bench/recorded_history.py): a job run's rows as the engine
    records them."""
    path = Path(__file__).resolve().parents[4] / "bench" / "recorded_history.py"
    spec = importlib.util.spec_from_file_location("bench_recorded_history", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.History


def test_history_routes_and_pages_answer_from_recorded_rows_without_spark(tmp_path: Path) -> None:
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    lh = tenants.get("default")
    lh.apply(write(tmp_path / "p" / "cells.yaml", cells_yaml("_p00")))
    history = _bench_history()(lh.store, projects=1, runs=40, seed=7)
    lh.store.append_rows([row for i in range(40) for row in history.run(i)], _by_gate=True)
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    runs = RunService(tenants, workers=1)
    api = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(runs), follow_redirects=False) as client:
        profiles = client.get("/api/v1/datasets/silver_cells_p00/profiles", headers=api).json()
        trust = client.get("/api/v1/datasets/bronze_cells_p00/trust?last=5", headers=api).json()
        decisions = lh.reader.decisions.decisions(dataset_id="silver_cells_p00")
        latest = decisions[-1].run_id
        diff = client.get(
            f"/api/v1/datasets/silver_cells_p00/decisions/{latest}/diff", headers=api
        ).json()
        login(client, token)
        overview = client.get("/").text
        dataset = client.get("/datasets/silver_cells_p00").text
        decision = client.get(f"/datasets/silver_cells_p00/decisions/{latest}").text
    runs.drain(30)
    nulls = next(
        s for s in profiles["series"] if (s["column_name"], s["metric"]) == ("lat", "null_ratio")
    )
    assert len(nulls["points"]) == 20  # the last 20 of its profiled batches
    assert len(trust["points"]) == 5
    times = [p["computed_at"] for p in trust["points"]]
    assert times == sorted(times)
    # each silver batch read the next bronze version: the diff names the parent that moved
    assert diff["against"] == decisions[-2].run_id
    assert [(u["parent"], u["now_version"] - u["then_version"]) for u in diff["upstream"]] == [
        ("bronze_cells_p00", 1)
    ]
    assert overview.count('class="run-mark"') == 30  # the newest 30 runs on the time axis
    assert 'data-chart="trust-score"' in dataset and 'data-column="lat"' in dataset
    assert 'data-diff="upstream" data-name="bronze_cells_p00"' in decision
    assert not lh.spark_started


def test_a_run_page_keeps_reloading_through_a_passing_read_error_and_not_a_lasting_one(
    site: tuple[TestClient, Tenants, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakeguard.words.errors import NotRegisteredError, StoreContended

    client, tenants, token = site
    login(client, token)
    reader = tenants.get("default").reader

    def passing(run_id: str) -> None:
        raise StoreContended("run_events could not be read")

    monkeypatch.setattr(reader.runs, "job_run", passing)
    answer = client.get("/runs/" + "a" * 32)
    assert answer.status_code != 200 and 'data-refresh="1"' in answer.text  # it reloads

    def lasting(run_id: str) -> None:
        raise NotRegisteredError(f"no run {run_id}", where="pipeline_runs")

    monkeypatch.setattr(reader.runs, "job_run", lasting)
    answer = client.get("/runs/" + "a" * 32)
    assert answer.status_code == 404 and "data-refresh" not in answer.text
