"""Alerts from real runs (Spark): a delivery a FAIL rule blocks becomes exactly one incident
and one message per route's channel at the test's receivers (the webhook's signature valid),
and the corrected delivery's promotion one resolution each; nothing is sent twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.words.vocabulary import AlertEvent, AttemptStatus, DeliveryAction
from openlaketx.config import LakehouseConfig
from openlaketx.service.dispatcher import Dispatcher
from openlaketx.service.tenants import Tenants
from openlaketx.settings import ServiceSettings
from tests.support.project import Project, assert_sound
from tests.support.receivers import SECRET, http_receiver

pytestmark = [pytest.mark.spark]

ALERTS = """
notification_channels:
  - {{id: team_hook, kind: webhook, url_ref: env:LAKETX_TEST_HOOK_URL,
     signing_secret_ref: env:LAKETX_TEST_HOOK_SECRET}}
  - {{id: team_slack, kind: slack, url_ref: env:LAKETX_TEST_SLACK_URL}}
notification_routes:
  - {{id: bronze_hook, channel: team_hook, datasets: [{bronze}]}}
  - {{id: bronze_slack, channel: team_slack, layers: [bronze], events: [BLOCKED, FAILED]}}
"""


def test_a_blocked_delivery_is_one_incident_one_message_per_channel_and_one_resolution(
    lakehouse: Any, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    with http_receiver() as receiver:
        monkeypatch.setenv("LAKETX_TEST_HOOK_URL", receiver.url("/hook"))
        monkeypatch.setenv("LAKETX_TEST_HOOK_SECRET", SECRET)
        monkeypatch.setenv("LAKETX_TEST_SLACK_URL", receiver.url("/slack"))
        text = project.yaml.read_text() + ALERTS.format(bronze=project.bronze)
        project.yaml.write_text(text)
        lakehouse.apply(project.yaml)
        project.deliver("cells_1.csv", ["GSM,1,95.5,1", "LTE,2,48.1,1"])  # lat 95.5: FAIL rule
        blocked = lakehouse.run(project.job)
        assert blocked.steps[0].status == AttemptStatus.BLOCKED
        settings = ServiceSettings(public_url="https://laketx.example.com")
        dispatcher = Dispatcher(
            Tenants(LakehouseConfig.from_env(home=Path(lakehouse.config.home)), settings)
        )
        first = dispatcher.tick()
        assert sorted(r.channel_id for r in first.delivered) == ["team_hook", "team_slack"]
        assert {r.action for r in first.delivered} == {DeliveryAction.SENT}
        (incident,) = lakehouse.incidents()
        assert (incident.cause, incident.subject, incident.open) == (
            AlertEvent.BLOCKED,
            project.bronze,
            True,
        )
        (hook,) = receiver.log[:1] if receiver.log[0].path == "/hook" else receiver.log[1:2]
        assert hook.signed
        data = hook.json["data"]
        assert data["run_id"] == blocked.steps[0].run_id and data["decision_id"]
        assert f"rule lat_range{project.suffix}" in data["explain"] and "fix:" in data["explain"]
        assert data["link"] == (
            f"https://laketx.example.com/datasets/{project.bronze}/decisions/{data['run_id']}"
        )
        assert dispatcher.tick().delivered == []
        # the source corrects the file; its promotion resolves the incident
        project.deliver("cells_1.csv", ["GSM,1,45.5,1", "LTE,2,48.1,1"])
        promoted = lakehouse.run(project.job)
        assert [s.status for s in promoted.steps] == [AttemptStatus.SUCCESS] * 2
        second = dispatcher.tick()
        assert sorted(r.channel_id for r in second.delivered) == ["team_hook", "team_slack"]
        (incident,) = lakehouse.incidents()
        assert not incident.open and incident.resolved_at is not None
        assert dispatcher.tick().delivered == []
        by_path = {p: [r.json for r in receiver.log if r.path == p] for p in ("/hook", "/slack")}
        assert [b["type"] for b in by_path["/hook"]] == ["incident.opened", "incident.resolved"]
        assert by_path["/slack"][0]["text"].startswith(f"CRITICAL BLOCKED: {project.bronze}")
        assert by_path["/slack"][1]["text"].startswith(f"RESOLVED BLOCKED: {project.bronze}")
        assert all(r.signed for r in receiver.log if r.path == "/hook")
        assert sorted(receiver.accepted_ids("/hook").values()) == [1, 1]  # each id once
        assert len(receiver.log) == 4
    assert_sound(lakehouse, project.bronze, project.silver)
