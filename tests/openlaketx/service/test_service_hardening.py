"""The eight failures found by trying `laketx serve` from outside, each reproduced against a
real uvicorn server: throttles keyed on the peer (and per key id), webhook replay and its
signature, braked bad signatures, one indistinguishable 401, Idempotency-Key bound to its
request and answered while its run is in flight, 413 for any oversized body, and a file the
arrival trigger must not strand. Plus the headers and limits around them."""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Iterator
from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import pytest

from lakeguard.actors.keys import PREFIX, Scope, _checksum, key_id_of, new_token
from lakeguard.store import RunWriter
from openlaketx.service.scheduler import Scheduler
from openlaketx.settings import ServiceSettings, TenantLimits
from tests.openlaketx.service.test_service import hooked_project, signed
from tests.support.project import Project, assert_sound, cells_yaml, write
from tests.support.service import Served, serving

pytestmark = pytest.mark.spark

API = "/api/v1"


@pytest.fixture(scope="module")
def served(
    spark: Any, template_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("hardened") / "lakehouse"
    shutil.copytree(template_home / "metadata", home / "metadata")
    with serving(home) as found:
        yield found


@pytest.fixture
def fresh(served: Served) -> Served:
    """The server with its brakes and budgets as new (tests fail on purpose from 127.0.0.1)."""
    served.brake.clear()
    served.rates.clear()
    return served


def project_of(
    served: Served, tmp_path: Path, s: str, extra: str = "", base: str | None = None
) -> Project:
    text = (base or cells_yaml(s)).replace(
        f"  - id: cells_job{s}\n", f"  - id: cells_job{s}\n{extra}"
    )
    p = Project(write(tmp_path / "project" / "cells.yaml", text), s)
    served.tenants.get("default").apply(p.yaml)
    return p


def forged(token: str) -> str:
    """The token's key id with another secret, the checksum right: only the secret is wrong."""
    key_id = key_id_of(token)
    body = f"{PREFIX}_{key_id}_{'A' * 33}"
    return f"{body}_{_checksum(body)}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# 1 -------------------------------------------------------------------------------------------
def test_the_failure_brake_counts_the_peer_not_what_x_forwarded_for_claims(
    fresh: Served,
) -> None:
    with fresh.client() as http:
        answers = [
            http.get(
                f"{API}/runs",
                headers={**bearer(f"ltx_bad_{i}"), "X-Forwarded-For": f"10.0.0.{i}"},
            ).status_code
            for i in range(12)
        ]
    assert answers == [401] * 10 + [429] * 2  # every claimed address is the one peer
    # behind a configured trusted proxy, the address it forwards is the client's
    trusted = ServiceSettings(trusted_proxies=(ip_network("127.0.0.0/8"),))
    with serving(fresh.home, settings=trusted) as proxied, proxied.client() as http:
        spread = [
            http.get(
                f"{API}/runs", headers={**bearer("ltx_bad"), "X-Forwarded-For": f"10.0.1.{i}"}
            ).status_code
            for i in range(12)
        ]
        assert spread == [401] * 12  # twelve clients, one failure each
        one = [
            http.get(
                f"{API}/runs",
                headers={**bearer("ltx_bad"), "X-Forwarded-For": "198.51.100.1, 10.0.2.1"},
            ).status_code
            for _ in range(11)
        ]
        assert one == [401] * 10 + [429]  # the nearest address the proxy saw is the client
        other = http.get(
            f"{API}/runs", headers={**bearer("ltx_bad"), "X-Forwarded-For": "10.0.2.2"}
        )
        assert other.status_code == 401


def test_a_client_failing_behind_a_shared_address_locks_out_only_itself(fresh: Served) -> None:
    mine, attacked = fresh.key(scopes=(Scope.RUNS_READ,)), fresh.key(scopes=(Scope.RUNS_READ,))
    # the failing client and the others come through one trusted proxy, each with its address
    trusted = ServiceSettings(trusted_proxies=(ip_network("127.0.0.0/8"),))
    shared, elsewhere = {"X-Forwarded-For": "192.0.2.1"}, {"X-Forwarded-For": "192.0.2.9"}
    with serving(fresh.home, settings=trusted) as proxied, proxied.client() as http:

        def status(token: str | None, where: dict[str, str]) -> int:
            headers = {**where, **(bearer(token) if token else {})}
            return http.get(f"{API}/runs", headers=headers).status_code

        guesses = [status(forged(attacked), shared) for _ in range(11)]
        assert guesses == [401] * 10 + [429]  # counted per key id: that key is braked there
        assert status(attacked, shared) == 429
        # the address is braked too, yet another person's key from it is still checked
        assert status(mine, shared) == 200
        assert status(new_token()[1], shared) == 429  # an invented key id does not dodge it
        assert status("not-a-key", shared) == 429
        assert status(None, shared) == 429
        assert status(attacked, elsewhere) == 200  # from another address the key works


# 2 -------------------------------------------------------------------------------------------
def test_a_replayed_delivery_answers_its_first_run_and_the_signature_covers_time_and_id(
    fresh: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = hooked_project(fresh, tmp_path, "_replay", "LAKETX_TEST_REPLAY")
    monkeypatch.setenv("LAKETX_TEST_REPLAY", "replay-secret")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    body = b'{"file": "d1.csv"}'
    headers = signed("replay-secret", body, "evt-r1", fresh.clock.wall())
    hook = f"{API}/hooks/{p.job}"
    with fresh.client() as http:
        first = http.post(hook, content=body, headers=headers)
        assert first.status_code == 202 and first.json()["new"] is True
        replayed = http.post(hook, content=body, headers=headers)  # the same bytes again
        assert replayed.status_code == 202
        assert replayed.json() == {**first.json(), "new": False}
        refused = {
            "another delivery id": {**headers, "X-LakeTx-Delivery": "evt-r2"},
            "another timestamp": {
                **headers,
                "X-LakeTx-Timestamp": str(int(headers["X-LakeTx-Timestamp"]) + 1),
            },
            "no sha256= prefix": {
                **headers,
                "X-LakeTx-Signature": headers["X-LakeTx-Signature"].removeprefix("sha256="),
            },
            "no timestamp": {k: v for k, v in headers.items() if k != "X-LakeTx-Timestamp"},
            "no delivery id": {k: v for k, v in headers.items() if k != "X-LakeTx-Delivery"},
            "signed 330 s ago": signed("replay-secret", body, "evt-r3", fresh.clock.wall() - 330),
            "signed 330 s ahead": signed("replay-secret", body, "evt-r4", fresh.clock.wall() + 330),
        }
        for name, sent in refused.items():
            assert http.post(hook, content=body, headers=sent).status_code == 401, name
        fresh.brake.clear()
        fresh.clock.advance(301)  # the captured delivery is outside the window now
        late = http.post(hook, content=body, headers=headers)
        assert late.status_code == 401
    requests = [
        r for r in fresh.tenants.get("default").store.rows("run_requests") if r["job_id"] == p.job
    ]
    assert [r["request_key"] for r in requests] == [f"hook:{p.job}:evt-r1"]  # one run
    detail = fresh.wait_for(fresh.key(), first.json()["run_id"])
    assert detail["status"] == "COMPLETED"


def test_a_delivery_id_with_a_dot_is_refused_so_a_captured_one_makes_no_second_run(
    fresh: Served,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With a dot allowed in the id, `<ts>.2026.12.01-6d0130.<body>` was id `2026.12.01-6d0130`,
    and also id `2026.12` with body `01-6d0130.<body>`, and id `2026`: one captured delivery,
    three runs. Now those bytes have one reading only, and it makes one run."""
    p = hooked_project(fresh, tmp_path, "_split", "LAKETX_TEST_SPLIT")
    monkeypatch.setenv("LAKETX_TEST_SPLIT", "split-secret")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    body = b'{"file": "d1.csv"}'
    hook = f"{API}/hooks/{p.job}"

    def splits(headers: dict[str, str], content: bytes) -> Iterator[tuple[dict[str, str], bytes]]:
        """The delivery with its id cut at each point, the rest moved into the body (at a dot
        the signed text stays byte for byte the same)."""
        delivery = headers["X-LakeTx-Delivery"]
        for cut in range(1, len(delivery)):
            head, rest = delivery[:cut], delivery[cut:]
            moved = rest[1:] if rest.startswith(".") else rest
            yield {**headers, "X-LakeTx-Delivery": head}, moved.encode() + b"." + content

    with caplog.at_level(logging.WARNING), fresh.client() as http:

        def post(headers: dict[str, str], content: bytes) -> Any:
            fresh.brake.clear()  # each is one attempt: the brake is not what is tested here
            return http.post(hook, content=content, headers=headers)

        wrong = post(signed("not-the-secret", body, "evt-s0", fresh.clock.wall()), body)
        shape = {k: v for k, v in wrong.json().items() if k != "instance"}

        def assert_refused(sent: list[tuple[dict[str, str], bytes]]) -> None:
            for headers, content in sent:
                answer = post(headers, content)
                where = (headers["X-LakeTx-Delivery"], content, answer.text)
                assert answer.status_code == 401, where  # as any other unauthenticated one
                assert {k: v for k, v in answer.json().items() if k != "instance"} == shape
                assert answer.headers["WWW-Authenticate"] == wrong.headers["WWW-Authenticate"]

        captured = signed("split-secret", body, "2026.12.01-6d0130", fresh.clock.wall())
        cuts = list(splits(captured, body))
        # the one reading of those bytes left: id `2026`, the rest of the text the body
        only = cuts.pop(3)
        assert only[0]["X-LakeTx-Delivery"] == "2026"
        assert_refused([(captured, body), *cuts])  # `2026.12` among them
        assert "has a '.'" in caplog.text  # why, for the operator only
        first = post(*only)
        assert first.status_code == 202 and first.json()["new"] is True
        again = post(*only)  # a replay of it answers its run, as any replay does
        assert again.status_code == 202 and again.json() == {**first.json(), "new": False}
        # that valid delivery, its id cut anywhere and the rest moved into the body: refused
        assert_refused(list(splits(*only)))
    requests = [
        r for r in fresh.tenants.get("default").store.rows("run_requests") if r["job_id"] == p.job
    ]
    assert [r["request_key"] for r in requests] == [f"hook:{p.job}:2026"]  # one run
    assert fresh.wait_for(fresh.key(), first.json()["run_id"])["status"] == "COMPLETED"


# 3 -------------------------------------------------------------------------------------------
def test_bad_webhook_signatures_are_braked(
    fresh: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = hooked_project(fresh, tmp_path, "_brake", "LAKETX_TEST_BRAKE")
    monkeypatch.setenv("LAKETX_TEST_BRAKE", "brake-secret")
    body = b"{}"
    with fresh.client() as http:
        answers = []
        for i in range(15):
            sent = signed("a-guess", body, f"evt-b{i}", fresh.clock.wall())
            answers.append(http.post(f"{API}/hooks/{p.job}", content=body, headers=sent))
        assert [a.status_code for a in answers] == [401] * 10 + [429] * 5
        assert int(answers[-1].headers["Retry-After"]) >= 1
        good = signed("brake-secret", body, "evt-good", fresh.clock.wall())
        assert http.post(f"{API}/hooks/{p.job}", content=body, headers=good).status_code == 429
        fresh.clock.advance(61)
        good = signed("brake-secret", body, "evt-good", fresh.clock.wall())
        accepted = http.post(f"{API}/hooks/{p.job}", content=body, headers=good)
        assert accepted.status_code == 202
    # the job's source never delivered: the run fails, which is not the point here
    fresh.wait_for(fresh.key(), accepted.json()["run_id"])


# 4 -------------------------------------------------------------------------------------------
def test_every_unauthenticated_webhook_failure_is_one_and_the_same_401(
    fresh: Served,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    unset = hooked_project(fresh, tmp_path / "a", "_unset", "HOOK_SECRET_BETA")
    monkeypatch.delenv("HOOK_SECRET_BETA", raising=False)
    plain = project_of(fresh, tmp_path / "b", "_plain")  # no webhook trigger
    live = hooked_project(fresh, tmp_path / "c", "_live", "LAKETX_TEST_LIVE")
    monkeypatch.setenv("LAKETX_TEST_LIVE", "live-secret")
    fresh.tenants.get("acme")  # a tenant that exists, without the job
    body = b"{}"
    now = fresh.clock.wall()

    def good(job: str, tenant: str | None = None, secret: str = "live-secret") -> Any:
        return job, signed(secret, body, "evt-x", now, tenant)

    cases = {
        "unknown tenant": good(live.job, "nosuch"),
        "another tenant": good(live.job, "acme"),
        "unknown job": good("no_such_job"),
        "job without the webhook trigger": good(plain.job),
        "secret variable unset": good(unset.job, secret=""),
        "wrong signature": good(live.job, secret="wrong"),
        "stale timestamp": (live.job, signed("live-secret", body, "evt-x", now - 3600)),
        "no headers": (live.job, {}),
        "odd tenant header": good(live.job, "../etc"),
    }
    answers = {}
    with caplog.at_level(logging.WARNING), fresh.client() as http:
        for name, (job, headers) in cases.items():
            answers[name] = http.post(f"{API}/hooks/{job}", content=body, headers=headers)
    shapes = set()
    for name, answer in answers.items():
        assert answer.status_code == 401, (name, answer.text)
        shown = {k: v for k, v in answer.json().items() if k != "instance"}
        shapes.add((json.dumps(shown, sort_keys=True), answer.headers["WWW-Authenticate"]))
        assert "HOOK_SECRET_BETA" not in answer.text and "not set" not in answer.text
    assert len(shapes) == 1  # one answer, whatever failed
    logged = caplog.text
    assert "HOOK_SECRET_BETA is not set" in logged  # the detail is for the operator
    assert "no tenant 'nosuch'" in logged and "takes no webhook" in logged


# 5 -------------------------------------------------------------------------------------------
def test_an_idempotency_key_sent_with_another_request_is_422(fresh: Served, tmp_path: Path) -> None:
    p = project_of(fresh, tmp_path / "a", "_idem1")
    other = project_of(fresh, tmp_path / "b", "_idem2")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    token = fresh.key()
    key = {"Idempotency-Key": "deploy-42"}
    with fresh.client(token) as http:
        first = http.post(f"{API}/jobs/{p.job}/runs", headers=key)
        assert first.status_code == 202
        reused = {
            "another job": http.post(f"{API}/jobs/{other.job}/runs", headers=key),
            "another body": http.post(f"{API}/jobs/{p.job}/runs", headers=key, json={"wait": 5}),
        }
        for name, answer in reused.items():
            assert answer.status_code == 422, (name, answer.text)
            assert answer.headers["content-type"].startswith("application/problem+json")
            problem = answer.json()
            assert problem["title"] == "IdempotencyKeyReused" and problem["fix"], name
            assert first.json()["run_id"] in problem["detail"]
        same = http.post(f"{API}/jobs/{p.job}/runs", headers=key)
        assert same.status_code == 202 and same.json() == {**first.json(), "new": False}
    lh = fresh.tenants.get("default")
    assert not [r for r in lh.reader.runs.job_runs(100) if r.pipeline_id == other.job]
    assert fresh.wait_for(token, first.json()["run_id"])["status"] == "COMPLETED"


# 6 -------------------------------------------------------------------------------------------
class HoldAtFirstStep:
    """A step observer that holds a run at the start of its first dataset step (its leases
    taken) until the test lets it go."""

    def __init__(self, job_datasets: set[str]) -> None:
        self.datasets = job_datasets
        self.holding = threading.Event()
        self.go = threading.Event()

    def started(self, dataset: Any, attempt_id: str, job_run_id: str) -> None:
        if dataset.dataset_id in self.datasets:
            self.holding.set()
            self.go.wait(120)

    def ended(self, dataset: Any, result: Any, job_run_id: str) -> None:
        return None


def test_an_idempotency_key_sent_again_while_its_run_holds_the_dataset_answers_that_run(
    fresh: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = project_of(fresh, tmp_path, "_idem3")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    hold = HoldAtFirstStep({p.bronze})
    monkeypatch.setattr("openlaketx.lakehouse.lineage_observer", lambda tenant: hold)
    token = fresh.key()
    key = {"Idempotency-Key": "nightly-7"}
    lh = fresh.tenants.get("default")
    try:
        with fresh.client(token) as http:
            first = http.post(f"{API}/jobs/{p.job}/runs", headers=key)
            assert first.status_code == 202
            run_id = first.json()["run_id"]
            assert hold.holding.wait(300)
            held = lh.reader.runs.lease(p.bronze)
            assert held is not None and held.run_id == run_id  # the run holds its dataset
            again = http.post(f"{API}/jobs/{p.job}/runs", headers=key)
            assert again.status_code == 202, again.text
            assert again.json() == {**first.json(), "new": False}
            assert http.get(f"{API}/runs/{run_id}").json()["status"] == "RUNNING"
            assert http.post(f"{API}/jobs/{p.job}/runs").status_code == 409  # a new request
    finally:
        hold.go.set()
    assert fresh.wait_for(token, run_id)["status"] == "COMPLETED"
    assert [
        r.pipeline_logging_id for r in lh.reader.runs.job_runs(100) if r.pipeline_id == p.job
    ] == [run_id]


# 7 -------------------------------------------------------------------------------------------
def test_an_oversized_body_is_413_whether_chunked_or_not(fresh: Served, tmp_path: Path) -> None:
    p = project_of(fresh, tmp_path, "_big")
    token = fresh.key()
    big = b'{"wait": 1' + b" " * (10 * 1024 * 1024) + b"}"

    def chunked() -> Iterator[bytes]:
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    lh = fresh.tenants.get("default")
    before = len(lh.store.rows("run_requests"))
    with fresh.client(token) as http:
        for path in (f"{API}/jobs/{p.job}/runs", f"{API}/hooks/{p.job}"):
            for how, content in (("declared", big), ("chunked", chunked())):
                answer = http.post(
                    path, content=content, headers={"Content-Type": "application/json"}
                )
                assert answer.status_code == 413, (path, how, answer.text)
                assert answer.headers["content-type"].startswith("application/problem+json")
                assert answer.json()["status"] == 413
        # a metadata document may be larger than a run request: its route has its own cap
        document = p.yaml.read_text() + "#" + "x" * 8000 + "\n"
        planned = http.post(
            f"{API}/definitions/plan",
            content=document,
            headers={"Content-Type": "application/yaml"},
        )
        assert planned.status_code == 200, planned.text
    assert len(lh.store.rows("run_requests")) == before


# 8 -------------------------------------------------------------------------------------------
def test_a_file_the_arrival_trigger_saw_is_not_stranded_by_a_block_or_an_earlier_key(
    fresh: Served, tmp_path: Path
) -> None:
    """The sequence found under `serve`: a file comes back with other content (blocked under
    the default on_changed_file: block) together with a new file; removing the changed file
    must start a run for the new one, with no unrelated file needed."""
    p = project_of(fresh, tmp_path, "_arrive", "    triggers: [file_arrival]\n")
    token = fresh.key()
    scheduler = Scheduler(fresh.runs)
    lh = fresh.tenants.get("default")

    def fire() -> str | None:
        fired = [f for f in scheduler.tick() if f.job_id == p.job]
        assert len(fired) <= 1
        if not fired:
            return None
        assert fired[0].run_id is not None
        return fresh.wait_for(token, fired[0].run_id)["status"]

    p.deliver("orders1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    assert fire() == "COMPLETED"
    assert fire() is None  # nothing waits
    p.add("orders1.csv", ["GSM,1,11.0,2", "LTE,2,21.0,2", "GSM,3,30.0,2"])  # other content
    p.add("orders1_copy.csv", ["GSM,4,40.0,1"])
    assert fire() == "BLOCKED"
    assert fire() is None  # the same situation would only block again
    (p.incoming / "orders1.csv").unlink()  # the cause is gone
    assert fire() == "COMPLETED"  # and the file still waiting goes in, at once
    assert fire() is None
    with fresh.client(token) as http:
        rows = http.get(f"{API}/datasets/{p.bronze}/rows", params={"limit": 100}).json()
    assert sorted(r["cell"] for r in rows["rows"]) == [1, 2, 4]
    assert_sound(lh, p.bronze, p.silver)


def test_under_reload_an_overwritten_file_starts_a_run_that_reloads_it(
    fresh: Served, tmp_path: Path
) -> None:
    s = "_reload"
    text = cells_yaml(s).replace(
        '    options: {header: "true"}\n',
        '    options: {header: "true"}\n    on_changed_file: reload\n',
    )
    p = project_of(fresh, tmp_path, s, "    triggers: [file_arrival]\n", text)
    lh = fresh.tenants.get("default")
    token = fresh.key()
    scheduler = Scheduler(fresh.runs)

    def fire() -> str | None:
        fired = [f for f in scheduler.tick() if f.job_id == p.job]
        if not fired:
            return None
        assert fired[0].run_id is not None
        return fresh.wait_for(token, fired[0].run_id)["status"]

    p.deliver("orders1.csv", ["GSM,1,10.0,1"])
    assert fire() == "COMPLETED"
    p.add("orders1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,2"])  # overwritten
    assert fire() == "COMPLETED"
    assert fire() is None
    assert [v.version for v in lh.reader.versions.versions(p.bronze)] == [1, 2]
    assert_sound(lh, p.bronze, p.silver)


# headers, contract and limits ------------------------------------------------------------------
def test_the_contract_declares_bearer_and_answers_carry_no_banner_and_no_cache(
    fresh: Served,
) -> None:
    token = fresh.key(scopes=(Scope.RUNS_READ,))
    with fresh.client(token) as http:
        spec = http.get(f"{API}/openapi.json").json()
        answers = [http.get(f"{API}/runs"), http.get(f"{API}/runs/{'0' * 32}")]
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schemes["bearer"]["description"],
    }
    assert schemes["webhookSignature"]["in"] == "header"
    assert {"bearer": []} in spec["paths"][f"{API}/runs"]["get"]["security"]
    assert {"webhookSignature": []} in spec["paths"][f"{API}/hooks/{{job_id}}"]["post"]["security"]
    with fresh.client() as http:
        answers += [http.get(f"{API}/runs"), http.get(f"{API}/health")]
    for answer in answers:
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        assert answer.headers["Cache-Control"] == "no-store"
        assert "server" not in answer.headers


@pytest.fixture(scope="module")
def limited(served: Served) -> Iterator[Served]:
    """A second server on the same home whose tenant `tight` has a small budget (3 requests a
    minute per key) and tenant `narrow` one run at a time."""
    settings = ServiceSettings(
        body_limit=4096,
        tenants={
            "tight": TenantLimits(requests=3, window_seconds=60),
            "narrow": TenantLimits(concurrent_runs=1),
        },
    )
    with serving(served.home, settings=settings) as found:
        yield found


def test_a_keys_request_budget_is_set_per_tenant_and_answers_429_with_retry_after(
    limited: Served,
) -> None:
    tight, roomy = limited.key("tight"), limited.key("default")
    with limited.client(tight) as http:
        answers = [http.get(f"{API}/runs") for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert answers[-1].headers["content-type"].startswith("application/problem+json")
        assert int(answers[-1].headers["Retry-After"]) == 20  # one request's worth of refill
        other_key = limited.key("tight")  # the budget is each key's
        assert http.get(f"{API}/runs", headers=bearer(other_key)).status_code == 200
        limited.clock.advance(20)
        assert http.get(f"{API}/runs").status_code == 200
        assert http.get(f"{API}/runs").status_code == 429
    with limited.client(roomy) as http:  # the default tenant's budget is the default one
        assert all(http.get(f"{API}/runs").status_code == 200 for _ in range(10))


def test_a_tenant_at_its_limit_of_runs_at_once_gets_429(limited: Served, tmp_path: Path) -> None:
    lh = limited.tenants.get("narrow")
    # a tenant's relative roots start at its home, whose feed its reach allows by default
    home = lh.config.tenant_home
    p = Project(write(home / "cells_t1.yaml", cells_yaml("_t1")), "_t1")
    q = Project(write(home / "cells_t2.yaml", cells_yaml("_t2")), "_t2")
    lh.apply(p.yaml)
    lh.apply(q.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    writer = RunWriter(lh.store)
    held = writer.acquire_leases([p.silver], "someone_else", ttl=timedelta(minutes=5))
    token = limited.key("narrow")
    try:
        with limited.client(token) as http:
            waiting = http.post(f"{API}/jobs/{p.job}/runs", json={"wait": 120})
            assert waiting.status_code == 202
            full = http.post(f"{API}/jobs/{q.job}/runs")
            assert full.status_code == 429, full.text
            assert full.json()["title"] == "TooManyRuns" and full.headers["Retry-After"]
    finally:
        writer.release_leases(held)
    assert limited.wait_for(token, waiting.json()["run_id"])["status"] == "COMPLETED"
    with limited.client(token) as http:  # a run ended: room for one again (nothing new: no JVM)
        later = http.post(f"{API}/jobs/{p.job}/runs")
        assert later.status_code == 202
    assert limited.wait_for(token, later.json()["run_id"])["status"] == "COMPLETED"
