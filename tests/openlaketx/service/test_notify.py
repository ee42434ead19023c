"""Delivering alerts to real receivers the tests start (no Spark): a webhook receiver that
checks the Standard Webhooks signature and answers 500, 429 or 200 as scripted, a Slack-like
receiver, and an SMTP server (aiosmtpd) with STARTTLS on a self-signed certificate. Run rows
are planted as a run writes them; the dispatcher runs on a test clock."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from lakeguard.actors.alerts.deliveries import delivery_id
from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.records.reach import ReachSettings
from lakeguard.words.vocabulary import AlertEvent, AttemptStatus, DeliveryAction, IncidentAction
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.service.dispatcher import Dispatcher
from openlaketx.service.tenants import Tenants
from openlaketx.settings import NotifySettings, ServiceSettings, TenantLimits
from tests.support.planted import T0, Plant
from tests.support.project import cells_yaml, write
from tests.support.receivers import SECRET, Receiver, http_receiver, self_signed, smtp_server

PUBLIC = "https://laketx.example.com"
HOOK = """
notification_channels:
  - {{id: hook, kind: webhook, url_ref: {prefix}HOOK_URL, signing_secret_ref: {prefix}HOOK_SECRET}}
notification_routes:
  - {{id: radio_owner, channel: hook, owners: [radio-team]}}
"""


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self):  # type: ignore[no-untyped-def]
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Home:
    lh: Lakehouse
    tenants: Tenants
    plant: Plant
    clock: Clock

    def dispatcher(self, holder: str | None = None) -> Dispatcher:
        return Dispatcher(self.tenants, clock=self.clock, holder=holder)

    def tick(self, holder: str | None = None) -> list[DeliveryRow]:
        self.clock.now = max(self.clock.now, self.plant.at)
        return self.dispatcher(holder).tick().delivered

    def deliveries(self) -> list[DeliveryRow]:
        return self.lh.store.read(DeliveryRow)

    def events(self) -> list[IncidentEventRow]:
        return self.lh.store.read(IncidentEventRow)


def project(alerts: str, prefix: str = "env:LAKETX_TEST_") -> str:
    text = cells_yaml("_n").replace(
        "    table: bronze.cells_n\n", "    table: bronze.cells_n\n    owner: radio-team\n"
    )
    return text + alerts.format(prefix=prefix)


def open_home(
    tmp_path: Path,
    alerts: str,
    *,
    tenant: str = "default",
    settings: ServiceSettings | None = None,
    prefix: str = "env:LAKETX_TEST_",
) -> Home:
    settings = settings or ServiceSettings(
        public_url=PUBLIC, notify=NotifySettings(backoff_seconds=2, max_attempts=4)
    )
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"), settings)
    lh = tenants.get(tenant)
    folder = lh.config.tenant_home if tenant != "default" else tmp_path / "p"
    lh.apply(write(Path(folder) / "cells.yaml", project(alerts, prefix)))
    return Home(lh, tenants, Plant(lh.store, dataset="bronze_cells_n", job="cells_job_n"), Clock())


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    with http_receiver() as r:
        monkeypatch.setenv("LAKETX_TEST_HOOK_URL", r.url("/hook"))
        monkeypatch.setenv("LAKETX_TEST_HOOK_SECRET", SECRET)
        yield r


def test_a_block_is_one_incident_one_signed_delivery_and_one_resolution(
    tmp_path: Path, receiver: Receiver
) -> None:
    home = open_home(tmp_path, HOOK)
    blocked = home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    (sent,) = home.tick()
    assert sent.action == DeliveryAction.SENT and sent.status_code == 200
    (got,) = receiver.log
    assert got.signed and got.headers["content-type"] == "application/json"
    body = got.json
    assert body["type"] == "incident.opened"
    data = body["data"]
    assert (data["cause"], data["action"], data["severity"]) == ("BLOCKED", "OPENED", "critical")
    assert data["run_id"] == blocked.run_id and data["pipeline_run_id"]
    assert data["decision_id"] and data["owner"] == "radio-team"
    assert "what: bronze_cells_n" in data["explain"] and "fix:" in data["explain"]
    assert data["link"] == f"{PUBLIC}/datasets/bronze_cells_n/decisions/{blocked.run_id}"
    assert data["incident_link"] == f"{PUBLIC}/incidents/{data['incident_id']}"
    assert got.id == delivery_id(data["event_id"], "hook")
    assert SECRET not in got.body.decode() and receiver.url() not in got.body.decode()
    assert home.tick() == [] and len(receiver.log) == 1  # nothing twice
    # blocked again within the repeat interval: the repeat is not sent; being stuck is news
    home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    rows = home.tick()
    assert sorted(r.action for r in rows) == [DeliveryAction.SENT, DeliveryAction.SUPPRESSED]
    assert [r.json["data"]["cause"] for r in receiver.log[1:]] == ["STUCK"]
    # promoted again: each incident gets one resolution
    home.plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
    home.tick()
    resolved = [r.json["data"] for r in receiver.log[2:]]
    assert sorted((d["cause"], d["action"]) for d in resolved) == [
        ("BLOCKED", "RESOLVED"),
        ("STUCK", "RESOLVED"),
    ]
    assert home.tick() == []
    assert all(r.signed for r in receiver.log)
    assert list(receiver.accepted_ids().values()) == [1, 1, 1, 1]
    # nothing the store keeps names a secret or the receiver's URL
    stored = repr(home.events()) + repr(home.deliveries())
    assert SECRET not in stored and receiver.url() not in stored


def test_a_500_and_a_429_are_retried_with_backoff_and_retry_after_under_one_id(
    tmp_path: Path, receiver: Receiver
) -> None:
    home = open_home(tmp_path, HOOK)
    receiver.script["/hook"] = [(500, {}), (429, {"Retry-After": "7"})]
    home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    (first,) = home.tick()
    assert first.action == DeliveryAction.FAILED and first.status_code == 500
    assert first.next_attempt_at is not None
    wait = (first.next_attempt_at - home.clock.now).total_seconds()
    assert 1 <= wait <= 2  # the first backoff: half to all of 2 s
    assert home.tick() == []  # not due yet
    home.clock.advance(wait + 0.01)
    (second,) = home.tick()
    assert (second.action, second.status_code, second.attempt) == (DeliveryAction.FAILED, 429, 2)
    assert second.next_attempt_at == home.clock.now + timedelta(seconds=7)  # as the receiver asked
    home.clock.advance(6)
    assert home.tick() == []
    home.clock.advance(1.01)
    (third,) = home.tick()
    assert (third.action, third.attempt) == (DeliveryAction.SENT, 3)
    assert [r.status for r in receiver.log] == [500, 429, 200]
    assert len({r.id for r in receiver.log}) == 1 and all(r.signed for r in receiver.log)


def test_an_unusable_or_unreachable_channel_gives_up_or_waits_naming_no_secret(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = open_home(tmp_path, HOOK)
    monkeypatch.delenv("LAKETX_TEST_HOOK_URL")
    home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    (gave_up,) = home.tick()
    assert gave_up.action == DeliveryAction.GAVE_UP
    assert "env:LAKETX_TEST_HOOK_URL" in (gave_up.error or "")
    # a receiver that is down: tried again later, the error without the URL
    monkeypatch.setenv("LAKETX_TEST_HOOK_URL", "http://127.0.0.1:9/hook?token=s3cr3t")
    home.plant.attempt(AttemptStatus.BLOCKED, dataset="silver_cells_n", allowed=False)
    home.lh.apply(
        write(
            tmp_path / "p" / "cells.yaml",
            project(HOOK.replace("owners: [radio-team]", "layers: [silver]")),
        )
    )
    (down,) = home.tick()
    assert down.action == DeliveryAction.FAILED and down.status_code is None
    assert "s3cr3t" not in (down.error or "") and "127.0.0.1:9" not in (down.error or "")
    # a receiver's final no (404): given up at once
    monkeypatch.setenv("LAKETX_TEST_HOOK_URL", receiver.url("/gone"))
    receiver.script["/gone"] = [(404, {})]
    home.clock.advance(3600)
    (no,) = home.tick()
    assert (no.action, no.status_code) == (DeliveryAction.GAVE_UP, 404)


def test_two_dispatchers_at_once_deliver_each_event_once(
    tmp_path: Path, receiver: Receiver
) -> None:
    home = open_home(tmp_path, HOOK.replace("owners: [radio-team]", ""))
    home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    home.plant.attempt(AttemptStatus.BLOCKED, dataset="silver_cells_n", allowed=False)
    home.plant.attempt(AttemptStatus.FAILED, dataset="silver_cells_n", error="boom")
    home.clock.now = home.plant.at
    # both derive and record the events, then race for the deliveries
    start = threading.Barrier(2)
    done: list[int] = []

    def run(holder: str) -> None:
        dispatcher = home.dispatcher(holder)
        start.wait()
        done.append(len(dispatcher.tick().delivered))

    threads = [threading.Thread(target=run, args=(f"here:{n}",)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    home.tick()  # whatever a pass left (an event recorded by the other one meanwhile)
    opened = [e for e in home.events() if e.action == IncidentAction.OPENED]
    assert len(opened) == 3  # two blocks and a failure, in three incidents
    assert sorted(receiver.accepted_ids().values()) == [1, 1, 1]
    assert len(receiver.log) == 3


def test_a_confined_tenant_reaches_only_its_allow_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with http_receiver() as receiver:
        monkeypatch.setenv("LAKETX_SECRET_BETA_HOOK_URL", receiver.url("/hook"))
        monkeypatch.setenv("LAKETX_SECRET_BETA_HOOK_SECRET", SECRET)
        fenced = ServiceSettings(tenants={"beta": TenantLimits(reach=ReachSettings())})
        home = open_home(
            tmp_path, HOOK, tenant="beta", settings=fenced, prefix="env:LAKETX_SECRET_BETA_"
        )
        home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
        (refused,) = home.tick()
        assert refused.action == DeliveryAction.GAVE_UP and receiver.log == []
        assert "not a destination tenant beta may reach" in (refused.error or "")
        allowed = ServiceSettings(
            tenants={
                "beta": TenantLimits(reach=ReachSettings(network=[f"127.0.0.1:{receiver.port}"]))
            }
        )
        home.tenants = Tenants(home.tenants.base, allowed)
        home.plant.attempt(AttemptStatus.BLOCKED, dataset="silver_cells_n", allowed=False)
        home.lh.apply(
            write(
                Path(home.lh.config.tenant_home) / "cells.yaml",
                project(
                    HOOK.replace("owners: [radio-team]", "layers: [silver]"),
                    "env:LAKETX_SECRET_BETA_",
                ),
            )
        )
        (sent,) = home.tick()
        assert sent.action == DeliveryAction.SENT and len(receiver.accepted()) == 1


SLACK = """
notification_channels:
  - {{id: team, kind: slack, url_ref: {prefix}SLACK_URL, mentions: {{radio-team: "<!subteam^S0RADIO>"}}}}
notification_routes:
  - {{id: radio_owner, channel: team, owners: [radio-team], events: [BLOCKED]}}
"""


def test_slack_gets_block_kit_that_mentions_the_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with http_receiver() as receiver:
        monkeypatch.setenv("LAKETX_TEST_SLACK_URL", receiver.url("/services/T0/B0/xyz"))
        home = open_home(tmp_path, SLACK)
        home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
        (sent,) = home.tick()
        assert sent.action == DeliveryAction.SENT
        payload = receiver.log[0].json
        assert payload["text"].startswith("CRITICAL BLOCKED: bronze_cells_n: promotion blocked")
        assert "<!subteam^S0RADIO>" in payload["text"]
        kinds = [b["type"] for b in payload["blocks"]]
        assert kinds == ["header", "context", "section", "actions"]
        assert "owner <!subteam^S0RADIO>" in payload["blocks"][1]["elements"][0]["text"]
        assert payload["blocks"][3]["elements"][0]["url"].startswith(f"{PUBLIC}/datasets/")


MAIL = """
notification_channels:
  - {{id: mail, kind: email, to: [oncall@example.com], sender: laketx@example.com,
     smtp_host: localhost, smtp_port: {port}{extra}}}
notification_routes:
  - {{id: radio_owner, channel: mail, owners: [radio-team]}}
"""


def test_mail_over_starttls_with_a_password_by_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the test's own authority
    monkeypatch.setenv("LAKETX_TEST_SMTP_PASSWORD", "smtp-pw")
    with smtp_server(starttls=(cert, key), password="smtp-pw") as box:
        extra = ", username: laketx, password_ref: env:LAKETX_TEST_SMTP_PASSWORD"
        home = open_home(tmp_path, MAIL.replace("{port}", str(box.port)).replace("{extra}", extra))
        home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
        (sent,) = home.tick()
        assert sent.action == DeliveryAction.SENT, sent.error
        (mail,) = box.messages
        assert box.tls == [True] and box.logins == ["laketx"]
        assert mail["Subject"].startswith("[laketx] CRITICAL BLOCKED: bronze_cells_n")
        assert (
            mail["To"] == "oncall@example.com"
            and mail["Message-ID"] == f"<{sent.delivery_id}@laketx>"
        )
        parts = {p.get_content_type(): p.get_content() for p in mail.iter_parts()}
        assert set(parts) == {"text/plain", "text/html"}
        assert "fix:" in parts["text/plain"] and f"{PUBLIC}/datasets/" in parts["text/plain"]
        assert "<pre>" in parts["text/html"] and "smtp-pw" not in mail.as_string()


def test_mail_without_starttls_only_when_told_and_refused_when_the_server_offers_none(
    tmp_path: Path,
) -> None:
    with smtp_server() as box:
        home = open_home(
            tmp_path, MAIL.replace("{port}", str(box.port)).replace("{extra}", ", starttls: true")
        )
        home.plant.attempt(AttemptStatus.BLOCKED, allowed=False)
        (refused,) = home.tick()
        assert refused.action == DeliveryAction.GAVE_UP and "offers no STARTTLS" in (
            refused.error or ""
        )
        assert box.messages == []
        home.lh.apply(
            write(
                tmp_path / "p" / "cells.yaml",
                project(
                    MAIL.replace("{port}", str(box.port))
                    .replace("{extra}", ", starttls: false")
                    .replace("owners: [radio-team]", "layers: [silver]")
                ),
            )
        )
        home.plant.attempt(AttemptStatus.BLOCKED, dataset="silver_cells_n", allowed=False)
        (sent,) = home.tick()
        assert sent.action == DeliveryAction.SENT and box.tls == [False]
        assert box.messages[0]["Subject"].startswith("[laketx] CRITICAL BLOCKED: silver_cells_n")


SLA = """
policies:
  - {{id: daily, type: SLA, applies_to: [bronze], enforcement: ALERT, expression: "hours_since_approved <= 24"}}
notification_channels:
  - {{id: hook, kind: webhook, url_ref: {prefix}HOOK_URL, signing_secret_ref: {prefix}HOOK_SECRET}}
notification_routes:
  - {{id: late, channel: hook, events: [SLA_MISSED]}}
"""


def test_a_stopped_feed_gets_its_sla_incident_from_a_scheduler_pass_with_no_run(
    tmp_path: Path, receiver: Receiver
) -> None:
    from openlaketx.service.runs import RunService
    from openlaketx.service.scheduler import Scheduler

    home = open_home(tmp_path, SLA)
    home.plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)  # the feed's last delivery
    promoted = home.plant.at
    runs = RunService(home.tenants, workers=1)
    scheduler = Scheduler(runs, clock=home.clock)
    try:
        home.clock.now = promoted + timedelta(hours=23, minutes=59)
        assert scheduler.tick() == [] and scheduler.missed == []
        home.clock.now = promoted + timedelta(hours=24, minutes=1)  # one pass after the breach
        assert scheduler.tick() == []  # nothing ran
        (missed,) = scheduler.missed
        assert missed.cause == AlertEvent.SLA_MISSED and missed.action == IncidentAction.OPENED
        scheduler.tick()
        assert scheduler.missed == []  # one incident per stale version, not one per pass
    finally:
        runs.drain(0)
    (sent,) = home.dispatcher().tick().delivered
    assert sent.action == DeliveryAction.SENT
    data = receiver.log[0].json["data"]
    assert (data["cause"], data["dataset_id"]) == ("SLA_MISSED", "bronze_cells_n")
    assert "over its freshness SLA of 24 h" in data["explain"]
    # the feed comes back: its promotion resolves the incident, one resolution is sent
    home.plant.at = home.clock.now
    home.plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=2)
    home.tick()
    assert [r.json["data"]["action"] for r in receiver.log] == ["OPENED", "RESOLVED"]
    assert home.tick() == []


def test_the_signature_matches_the_standard_webhooks_test_vector() -> None:
    from openlaketx.service.notify.webhook import sign, signing_key

    # the spec's own example (standard-webhooks' reference libraries test with it)
    key = signing_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "test")
    body = b'{"test": 2432232314}'
    signature = sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    with pytest.raises(Exception, match="whsec_"):
        signing_key("not-a-secret", "notification_channels[hook].signing_secret_ref")


def test_laketx_scheduler_once_records_a_missed_sla_as_of_its_time(
    tmp_path: Path, receiver: Receiver
) -> None:
    import json

    from typer.testing import CliRunner

    from openlaketx.cli import app as cli

    home = open_home(tmp_path, SLA)
    home.plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
    late = home.plant.at + timedelta(hours=25)
    args = ["--home", str(tmp_path / "lakehouse"), "scheduler", "--once", "--json"]
    answer = CliRunner().invoke(cli, [*args, "--now", late.isoformat()])
    assert answer.exit_code == 0, answer.output
    (row,) = [r for r in json.loads(answer.output) if r["trigger"] == "freshness"]
    assert row["detail"] == "bronze_cells_n: freshness SLA of 24 h missed"
    (missed,) = home.events()
    assert missed.cause == AlertEvent.SLA_MISSED
