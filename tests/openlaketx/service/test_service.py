"""`laketx serve`'s HTTP API on a real uvicorn server with a real HTTP client: runs end to end,
idempotency and conflicts, tenant isolation on every endpoint, keys and their refusals, hostile
requests, webhooks and retries. `verify` holds after every scenario."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeguard.actors.keys import Scope, token_hash
from lakeguard.records.runs.rows import RunEventRow
from lakeguard.store import RunWriter
from lakeguard.words.vocabulary import EventStatus, TriggerType
from tests.support.project import Project, assert_sound, cells_yaml, write
from tests.support.service import Served, serving

pytestmark = pytest.mark.spark

API = "/api/v1"


@pytest.fixture(scope="module")
def served(
    spark: Any, template_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("served") / "lakehouse"
    shutil.copytree(template_home / "metadata", home / "metadata")
    with serving(home) as found:
        yield found


HOOKED = "cells_job_nokey"


@pytest.fixture(scope="module")
def hooked(served: Served, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A job that takes webhooks, its secret in a file: a request without its signature is
    refused whatever key it carries."""
    root = tmp_path_factory.mktemp("hooked")
    secret = write(root / "secret", "s3cret-file")
    s = "_nokey"
    text = cells_yaml(s).replace(
        f"  - id: cells_job{s}\n",
        f"  - id: cells_job{s}\n    triggers: [webhook]\n    webhook_secret_ref: file:{secret}\n",
    )
    served.tenants.get("default").apply(write(root / "project" / "cells.yaml", text))
    return HOOKED


def project_of(served: Served, tmp_path: Path, suffix: str, tenant: str = "default") -> Project:
    p = Project(write(tmp_path / "project" / "cells.yaml", cells_yaml(suffix)), suffix)
    served.tenants.get(tenant).apply(p.yaml)
    return p


def no_secret_in(token: str, *responses: Any) -> None:
    for response in responses:
        text = response.text + json.dumps(dict(response.headers))
        assert token not in text and token_hash(token) not in text


def test_a_run_triggered_over_http_is_visible_from_accepted_to_its_end(
    served: Served, tmp_path: Path
) -> None:
    p = project_of(served, tmp_path, "_api1")
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    token = served.key()
    with served.client(token) as http:
        accepted = http.post(f"{API}/jobs/{p.job}/runs")
        assert accepted.status_code == 202, accepted.text
        run_id = accepted.json()["run_id"]
        assert accepted.headers["Location"] == f"{API}/runs/{run_id}"
        first = http.get(f"{API}/runs/{run_id}").json()
        assert first["status"] in ("PENDING", "RUNNING", "COMPLETED")
        assert first["trigger_type"] == "api" and first["triggered_by"].startswith("api key ")
        # a long poll: one GET answers when the run (executed by this process) has ended
        detail = http.get(f"{API}/runs/{run_id}", params={"wait": 60}).json()
        assert detail["status"] == "COMPLETED", detail
        too_long = http.get(f"{API}/runs/{run_id}", params={"wait": 61})
        assert too_long.status_code == 422 and "wait" in too_long.text
        assert [a["dataset_id"] for a in detail["attempts"]] == [p.bronze, p.silver]
        assert {d["dataset_id"] for d in detail["decisions"]} == {p.bronze, p.silver}
        assert detail["steps"] and detail["end_time"]
        listed = http.get(f"{API}/runs", params={"limit": 5}).json()
        assert run_id in [r["run_id"] for r in listed["runs"]]
        datasets = {d["dataset_id"]: d for d in http.get(f"{API}/datasets").json()}
        assert datasets[p.silver]["version"] == 1
        one = http.get(f"{API}/datasets/{p.silver}").json()
        assert [v["version"] for v in one["versions"]] == [1]
        assert one["latest_decision"]["allowed"] is True and 0 <= one["trust"]["score"] <= 100
        attempt = detail["attempts"][1]["run_id"]
        decision = http.get(f"{API}/datasets/{p.silver}/decisions/{attempt}").json()
        assert decision["run_id"] == attempt and decision["evidence"]["upstream"] == {p.bronze: 1}
        rows = http.get(f"{API}/datasets/{p.silver}/rows", params={"limit": 1}).json()
        assert rows["version"] == 1 and len(rows["rows"]) == 1
        assert set(rows["rows"][0]) == {"radio", "cell", "lat", "updated"}  # no engine columns
        engine = http.get(
            f"{API}/datasets/{p.silver}/rows", params={"limit": 1, "engine_columns": "true"}
        ).json()
        assert {"_laketx_version", "_laketx_run_id", "_laketx_row_digest"} <= set(engine["rows"][0])
        page2 = http.get(f"{API}/datasets/{p.silver}/rows", params={"limit": 5, "offset": 1})
        assert len(page2.json()["rows"]) == 1
        # pages in a stable order: one row at a time, every row once, as one page has them
        every = http.get(f"{API}/datasets/{p.silver}/rows", params={"limit": 5}).json()["rows"]
        one_by_one = [
            http.get(f"{API}/datasets/{p.silver}/rows", params={"limit": 1, "offset": i}).json()[
                "rows"
            ][0]
            for i in range(len(every))
        ]
        assert one_by_one == every == sorted(every, key=lambda r: (r["radio"], r["cell"]))
        verified = http.post(f"{API}/verify").json()
        assert verified == {"holds": True, "violations": []}
        # the same job again: nothing new, decided without Spark, visible the same way
        again = served.wait_for(token, http.post(f"{API}/jobs/{p.job}/runs").json()["run_id"])
        assert again["status"] == "COMPLETED"
        assert all(a["rows_written"] == 0 for a in again["attempts"])
        no_secret_in(token, accepted, http.get(f"{API}/runs"))
    assert_sound(served.tenants.get("default"), p.bronze, p.silver)


def test_health_needs_no_key_and_tells_nothing_about_any_tenants_runs(
    served: Served, tmp_path: Path
) -> None:
    p = project_of(served, tmp_path, "_health")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    lh = served.tenants.get("default")
    writer = RunWriter(lh.store)
    held = writer.acquire_leases([p.bronze], "someone_else", ttl=timedelta(minutes=5))
    token = served.key()
    with served.client(token) as http:
        waiting = http.post(f"{API}/jobs/{p.job}/runs", json={"wait": 120})
        assert waiting.status_code == 202
    try:
        assert served.runs.in_flight() >= 1  # a tenant's run waits in this very server
        with served.client() as http:
            health = http.get(f"{API}/health")
        assert health.status_code == 200
        assert health.json() == {"status": "ok", "accepting": True, "spark": "on_demand"}
    finally:
        writer.release_leases(held)
    assert served.wait_for(token, waiting.json()["run_id"])["status"] == "COMPLETED"


def test_an_idempotency_key_gives_the_same_run_and_a_held_job_answers_409(
    served: Served, tmp_path: Path
) -> None:
    p = project_of(served, tmp_path, "_api2")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])  # a source that never delivered fails its run
    lh = served.tenants.get("default")
    writer = RunWriter(lh.store)
    held = writer.acquire_leases([p.silver], "someone_else", ttl=timedelta(minutes=5))
    token = served.key()
    with served.client(token) as http:
        refused = http.post(f"{API}/jobs/{p.job}/runs")
        assert refused.status_code == 409
        assert refused.headers["content-type"].startswith("application/problem+json")
        body = refused.json()
        assert body["title"] == "WriteConflict" and "someone_else" in body["detail"]
        assert body["fix"] and body["status"] == 409
        assert lh.reader.runs.job_runs(50) == [
            r for r in lh.reader.runs.job_runs(50) if r.pipeline_id != p.job
        ]
        waiting = http.post(
            f"{API}/jobs/{p.job}/runs", json={"wait": 120}, headers={"Idempotency-Key": "k-1"}
        )
        assert waiting.status_code == 202
        same = http.post(
            f"{API}/jobs/{p.job}/runs", json={"wait": 120}, headers={"Idempotency-Key": "k-1"}
        )
        assert same.json() == {**waiting.json(), "new": False}
        writer.release_leases(held)
        run_id = waiting.json()["run_id"]
        assert served.wait_for(token, run_id)["status"] == "COMPLETED"
        runs_of_job = [r for r in lh.reader.runs.job_runs(50) if r.pipeline_id == p.job]
        assert [r.pipeline_logging_id for r in runs_of_job] == [run_id]


def test_another_tenants_ids_are_not_found_on_every_endpoint(
    served: Served, tmp_path: Path
) -> None:
    p = project_of(served, tmp_path, "_iso")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    owner = served.key("default")
    run_id = served.runs.submit(
        "default",
        p.job,
        trigger_type=TriggerType.API,
        triggered_by="test",
    ).run_id
    detail = served.wait_for(owner, run_id)
    attempt = detail["attempts"][1]["run_id"]
    own_key = served.tenants.keys.list("default")[-1].api_key_id
    other = served.key("acme")
    requests = [
        ("POST", f"{API}/jobs/{p.job}/runs"),
        ("GET", f"{API}/runs/{run_id}"),
        ("GET", f"{API}/datasets/{p.silver}"),
        ("GET", f"{API}/datasets/{p.silver}/decisions/{attempt}"),
        ("GET", f"{API}/datasets/{p.silver}/rows"),
        ("GET", f"{API}/datasets/{p.silver}/profiles"),
        ("GET", f"{API}/datasets/{p.silver}/trust"),
        ("GET", f"{API}/datasets/{p.silver}/decisions/{attempt}/diff"),
        ("POST", f"{API}/keys/{own_key}/revoke"),
        ("GET", f"{API}/jobs/{p.job}"),
    ]
    with served.client(other) as http:
        for method, path in requests:
            answer = http.request(method, path)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.headers["content-type"].startswith("application/problem+json")
        assert run_id not in str(http.get(f"{API}/runs").json())
        assert p.silver not in str(http.get(f"{API}/datasets").json())
        assert own_key not in str(http.get(f"{API}/keys").json())
        assert http.post(f"{API}/verify").json()["holds"] is True  # its own, empty store
        # the definitions routes read the caller's tenant only
        assert p.job not in http.get(f"{API}/jobs").text
        assert p.job not in http.get(f"{API}/definitions").text
        assert p.silver not in http.get(f"{API}/definitions", params={"format": "json"}).text
        assert p.silver not in http.get(f"{API}/changes", params={"since": "7d"}).text
        assert p.silver not in http.get(f"{API}/lineage").text
        planned = http.post(
            f"{API}/definitions/plan",
            content=p.yaml.read_text(),
            headers={"Content-Type": "application/yaml"},
        ).json()
        assert {c["action"] for c in planned["changes"]} == {"create"}  # new to acme
        hook = http.post(f"{API}/hooks/{p.job}", headers={"X-LakeTx-Tenant": "acme"})
        assert hook.status_code == 401  # no webhook there: the same answer as a bad signature
    with served.client(owner) as http:
        assert p.job in [j["job_id"] for j in http.get(f"{API}/jobs").json()]
        assert http.get(f"{API}/jobs/{p.job}").status_code == 200
        assert p.silver in http.get(f"{API}/lineage").text
    assert served.tenants.keys.authenticate(owner).tenant_id == "default"  # not revoked
    # verify reads the caller's store and no other: a violation planted in acme's store only
    # (a run left RUNNING long ago) is what acme's key sees, and the owner's key does not
    planted = "a" * 32
    acme = served.tenants.get("acme")
    RunWriter(acme.store).append(
        [
            RunEventRow(
                run_id=planted,
                pipeline_logging_id=planted,
                pipeline_id="acme_job",
                tenant_id=acme.store.tenant,
                status=EventStatus.RUNNING,
                event_time=acme.store.now() - timedelta(days=3),
                worker_instance="gone:1",
                trigger_type=TriggerType.MANUAL,
            )
        ]
    )
    with served.client(other) as http:
        theirs = http.post(f"{API}/verify").json()
    with served.client(owner) as http:
        mine = http.post(f"{API}/verify").json()
    assert theirs["holds"] is False
    assert [v["check"] for v in theirs["violations"]] == ["left_running"]
    assert planted in json.dumps(theirs["violations"])
    assert mine["holds"] is True and planted not in json.dumps(mine)


@pytest.mark.parametrize(
    "method, path",
    [
        ("POST", f"{API}/jobs/a_job/runs"),
        ("GET", f"{API}/runs"),
        ("GET", f"{API}/runs/{'0' * 32}"),
        ("GET", f"{API}/datasets"),
        ("GET", f"{API}/datasets/a_dataset"),
        ("GET", f"{API}/datasets/a_dataset/decisions/{'0' * 32}"),
        ("GET", f"{API}/datasets/a_dataset/rows"),
        ("GET", f"{API}/datasets/a_dataset/rules"),
        ("GET", f"{API}/datasets/a_dataset/schema-changes"),
        ("GET", f"{API}/datasets/a_dataset/quarantine"),
        ("GET", f"{API}/datasets/a_dataset/profiles"),
        ("GET", f"{API}/datasets/a_dataset/trust"),
        ("GET", f"{API}/datasets/a_dataset/decisions/{'0' * 32}/diff"),
        ("GET", f"{API}/freshness"),
        ("POST", f"{API}/verify"),
        ("GET", f"{API}/keys"),
        ("POST", f"{API}/keys/0123456789ab/revoke"),
        ("POST", f"{API}/hooks/{HOOKED}"),  # a key is no signature
        ("GET", f"{API}/jobs"),
        ("GET", f"{API}/jobs/a_job"),
        ("GET", f"{API}/definitions"),
        ("POST", f"{API}/definitions/plan"),
        ("POST", f"{API}/definitions/apply"),
        ("GET", f"{API}/changes"),
        ("GET", f"{API}/lineage"),
        ("GET", f"{API}/incidents"),
        ("GET", f"{API}/incidents/{'0' * 32}"),
    ],
)
def test_every_endpoint_refuses_a_request_without_a_usable_key(
    served: Served, hooked: str, method: str, path: str
) -> None:
    served.brake.clear()  # five refusals below stay under the brake's threshold
    expired = served.tenants.keys.create("default", (Scope.RUNS_READ,), expires_in=timedelta(-1))
    revoked, revoked_token = served.tenants.keys.create("default", (Scope.RUNS_READ,))
    served.tenants.keys.revoke(revoked.api_key_id)
    with served.client() as http:
        for headers in (
            {},
            {"Authorization": "Bearer ltx_nothing"},
            {"Authorization": f"Bearer {expired[1]}"},
            {"Authorization": f"Bearer {revoked_token}"},
            {"Authorization": f"Basic {revoked_token}"},
        ):
            answer = http.request(method, path, headers=headers)
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.headers["WWW-Authenticate"] == "Bearer"
            no_secret_in(revoked_token, answer)
            no_secret_in(expired[1], answer)


def test_scopes_the_query_string_and_the_brake_on_failures(served: Served) -> None:
    served.brake.clear()  # earlier tests failed on purpose from this same client
    reader = served.key(scopes=(Scope.RUNS_READ,))
    with served.client(reader) as http:
        forbidden = http.post(f"{API}/jobs/any_job/runs")
        assert forbidden.status_code == 403 and forbidden.json()["title"] == "ForbiddenError"
        assert http.get(f"{API}/keys").status_code == 403
    with served.client() as http:
        leaked = http.get(f"{API}/runs", params={"api_key": reader})
        assert leaked.status_code == 400 and "query string" in leaked.json()["detail"]
        no_secret_in(reader, leaked)
        answers = [
            http.get(f"{API}/runs", headers={"Authorization": f"Bearer {reader}x"}).status_code
            for _ in range(12)
        ]
        assert answers[:10] == [401] * 10 and answers[10:] == [429, 429]
        braked = http.get(f"{API}/runs", headers={"Authorization": f"Bearer {reader}x"})
        assert braked.status_code == 429 and int(braked.headers["Retry-After"]) >= 1
        # a key that exists is still checked: the failing client locks out only itself
        assert http.get(f"{API}/runs", headers={"Authorization": f"Bearer {reader}"}).is_success
        served.clock.advance(61)  # the window passes
        again = http.get(f"{API}/runs", headers={"Authorization": f"Bearer {reader}x"})
        assert again.status_code == 401
    served.brake.clear()


def test_hostile_requests_get_a_clean_4xx_and_write_nothing(served: Served, tmp_path: Path) -> None:
    p = project_of(served, tmp_path, "_hostile")
    lh = served.tenants.get("default")
    before = len(lh.store.rows("run_requests")), len(lh.store.rows("pipeline_runs"))
    token = served.key()
    with served.client(token) as http:
        answers = {
            "malformed json": http.post(
                f"{API}/jobs/{p.job}/runs",
                content=b"{not json",
                headers={"Content-Type": "application/json"},
            ),
            "wrong type": http.post(f"{API}/jobs/{p.job}/runs", json={"wait": "soon"}),
            "unknown field": http.post(f"{API}/jobs/{p.job}/runs", json={"sql": "DROP"}),
            "oversized": http.post(f"{API}/jobs/{p.job}/runs", content=b"{" + b" " * 10_000),
            "traversal": http.get(f"{API}/datasets/..%2F..%2Fetc/rows"),
            "dotted id": http.get(f"{API}/datasets/../rows"),
            "unknown job": http.post(f"{API}/jobs/no_such_job/runs"),
            "unknown run": http.get(f"{API}/runs/{'f' * 32}"),
            "odd run id": http.get(f"{API}/runs/not-a-run"),
            "huge limit": http.get(f"{API}/runs", params={"limit": 10_000}),
            "unknown route": http.get(f"{API}/sql", params={"q": "SELECT 1"}),
        }
    for name, answer in answers.items():
        assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json"), name
        assert answer.json()["status"] == answer.status_code, name
    assert answers["oversized"].status_code == 413
    assert answers["unknown job"].status_code == 404
    assert (len(lh.store.rows("run_requests")), len(lh.store.rows("pipeline_runs"))) == before


def signed(
    secret: str, body: bytes, delivery: str, timestamp: float, tenant: str | None = None
) -> dict[str, str]:
    """A delivery's headers, signed as docs/service.md says (computed here, not by the
    service's own code): HMAC-SHA256 over `<timestamp>.<delivery id>.<body>`."""
    stamp = str(int(timestamp))
    content = f"{stamp}.{delivery}.".encode() + body
    digest = hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()
    headers = {
        "X-LakeTx-Timestamp": stamp,
        "X-LakeTx-Delivery": delivery,
        "X-LakeTx-Signature": f"sha256={digest}",
    }
    return headers | ({"X-LakeTx-Tenant": tenant} if tenant else {})


def hooked_project(served: Served, tmp_path: Path, s: str, secret_ref: str) -> Project:
    text = cells_yaml(s).replace(
        f"  - id: cells_job{s}\n",
        f"  - id: cells_job{s}\n    triggers: [webhook]\n    webhook_secret_ref: {secret_ref}\n",
    )
    p = Project(write(tmp_path / "project" / "cells.yaml", text), s)
    served.tenants.get("default").apply(p.yaml)
    return p


def test_a_signed_webhook_starts_a_run_and_a_forged_one_is_refused(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.brake.clear()
    p = hooked_project(served, tmp_path, "_hook", "LAKETX_TEST_HOOK")
    monkeypatch.setenv("LAKETX_TEST_HOOK", "s3cret")
    body = json.dumps({"delivered": "d1.csv"}).encode()
    good = signed("s3cret", body, "evt-1", served.clock.wall())
    with served.client() as http:
        forged = http.post(
            f"{API}/hooks/{p.job}",
            content=body,
            headers={**good, "X-LakeTx-Signature": "sha256=00"},
        )
        assert forged.status_code == 401 and "s3cret" not in forged.text
        unsigned_job = http.post(f"{API}/hooks/no_such_job", content=body, headers=good)
        assert unsigned_job.status_code == 401
        accepted = http.post(f"{API}/hooks/{p.job}", content=body, headers=good)
        assert accepted.status_code == 202, accepted.text
        assert accepted.json()["new"] is True
    detail = served.wait_for(served.key(), accepted.json()["run_id"])
    assert detail["trigger_type"] == "webhook" and detail["triggered_by"] == "webhook evt-1"


def test_a_transient_failure_is_retried_as_a_linked_run_and_a_block_never_is(
    served: Served, tmp_path: Path
) -> None:
    s = "_retry"
    text = cells_yaml(s).replace(
        f"  - id: cells_job{s}\n",
        f"  - id: cells_job{s}\n    max_retries: 2\n    retry_delay_seconds: 1\n",
    )
    p = Project(write(tmp_path / "project" / "cells.yaml", text), s)
    lh = served.tenants.get("default")
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    writer = RunWriter(lh.store)
    held = writer.acquire_leases([p.bronze], "someone_else", ttl=timedelta(minutes=5))
    token = served.key()
    first = served.runs.submit(
        "default",
        p.job,
        trigger_type=TriggerType.API,
        triggered_by="test",
        wait=0.5,
    )
    failed = served.wait_for(token, first.run_id)
    assert failed["status"] == "FAILED" and "someone_else" in failed["error"]
    writer.release_leases(held)
    import time

    deadline = time.monotonic() + 120
    retry = None
    while retry is None and time.monotonic() < deadline:
        found = [r for r in lh.store.rows("run_requests") if r.get("retry_of") == first.run_id]
        retry = found[0] if found else None
        time.sleep(0.2)
    assert retry is not None and retry["trigger_type"] == "retry"
    assert retry["not_before"] > retry["requested_at"]  # after a backoff
    done = served.wait_for(token, retry["run_id"])
    assert done["status"] == "COMPLETED" and done["retry_of"] == first.run_id
    with served.client(token) as http:  # the list says it too
        listed = {
            r["run_id"]: r for r in http.get(f"{API}/runs", params={"limit": 50}).json()["runs"]
        }
    assert listed[retry["run_id"]]["retry_of"] == first.run_id
    assert listed[first.run_id]["retry_of"] is None and "scheduled_for" in listed[first.run_id]
    # a blocked decision is an outcome: never retried
    p.deliver("bad.csv", ["GSM,9,999.0,1"])
    blocked = served.runs.submit("default", p.job, trigger_type=TriggerType.API, triggered_by="t")
    assert served.wait_for(token, blocked.run_id)["status"] == "BLOCKED"
    time.sleep(2)
    assert not [r for r in lh.store.rows("run_requests") if r.get("retry_of") == blocked.run_id]
    assert_sound(lh, p.bronze, p.silver)
