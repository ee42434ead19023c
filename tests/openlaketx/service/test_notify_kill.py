"""A dispatcher killed mid-delivery loses no event and sends none twice (no Spark).

A child process (`laketx notify --once`) records the events, claims their deliveries and
starts sending; the receiver holds the first request. While it is held a second dispatcher, in
this process, finds every delivery claimed and sends nothing. The child is then SIGKILLed with
its process group, the held request dropped unanswered (its sender is dead), and the second
dispatcher's next pass takes the dead dispatcher's claims over and delivers every event, the
interrupted one again under the same `webhook-id`: a receiver that deduplicates by id, as the
Standard Webhooks spec asks, processes each event once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from lakeguard.records.alerts.event_rows import DeliveryRow
from lakeguard.store.store import utcnow
from lakeguard.words.vocabulary import AttemptStatus, DeliveryAction
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.service.dispatcher import Dispatcher
from openlaketx.service.tenants import Tenants
from tests.support.children import ROOT
from tests.support.planted import Plant
from tests.support.project import cells_yaml, write
from tests.support.receivers import SECRET, http_receiver

pytestmark = [pytest.mark.subprocess]

CLI = "import sys; from openlaketx.cli import main; sys.argv[0] = 'laketx'; main()"
ALERTS = """
notification_channels:
  - {id: hook, kind: webhook, url_ref: env:LAKETX_TEST_HOOK_URL,
     signing_secret_ref: env:LAKETX_TEST_HOOK_SECRET}
notification_routes:
  - {id: everything, channel: hook}
"""


def test_a_dispatcher_killed_mid_delivery_loses_nothing_and_sends_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "lakehouse"
    lh = Lakehouse.open(home=home)
    lh.apply(write(tmp_path / "p" / "cells.yaml", cells_yaml("_k") + ALERTS))
    plant = Plant(lh.store, dataset="bronze_cells_k", job="cells_job_k")
    plant.at = utcnow() - timedelta(hours=1)
    plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    plant.attempt(AttemptStatus.BLOCKED, dataset="silver_cells_k", allowed=False)
    plant.attempt(AttemptStatus.FAILED, dataset="silver_cells_k", error="the disk is full")
    log = tmp_path / "child.log"
    with http_receiver() as receiver:
        receiver.hold = threading.Event()
        receiver.abandon = True
        env = {
            **os.environ,
            "LAKETX_TEST_HOOK_URL": receiver.url("/hook"),
            "LAKETX_TEST_HOOK_SECRET": SECRET,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        }
        monkeypatch.setenv("LAKETX_TEST_HOOK_URL", env["LAKETX_TEST_HOOK_URL"])
        monkeypatch.setenv("LAKETX_TEST_HOOK_SECRET", SECRET)
        child = subprocess.Popen(
            [sys.executable, "-c", CLI, "--home", str(home), "notify", "--once"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            start_new_session=True,  # its own process group
        )
        try:
            assert receiver.held.wait(120), log.read_text()[-3000:]
            claims = [r for r in lh.store.read(DeliveryRow) if r.action == DeliveryAction.CLAIMED]
            assert len(claims) == 3 and {c.holder for c in claims} == {
                claims[0].holder
            }  # the child claimed all three in one commit
            # a second dispatcher while the child holds them: nothing is sent twice
            other = Dispatcher(Tenants(LakehouseConfig.from_env(home=home)))
            assert other.tick().delivered == []
            assert len(receiver.log) == 1
        finally:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(30)
        receiver.hold.set()  # the held request is dropped: its sender is gone
        done = other.tick()
        assert sorted(r.action for r in done.delivered) == [DeliveryAction.SENT] * 3
        assert other.tick().delivered == []
        # every event delivered, each id accepted once; the interrupted one came again
        ids = receiver.accepted_ids()
        assert sorted(ids.values()) == [1, 1, 1]
        first = receiver.log[0]
        assert first.status == 0 and ids[first.id] == 1  # unanswered, then sent again
        assert len(receiver.log) == 4 and all(r.signed for r in receiver.log)
        rows = lh.store.read(DeliveryRow)
        sent = [r for r in rows if r.action == DeliveryAction.SENT]
        assert len(sent) == len({r.delivery_id for r in sent}) == 3
        taken = [r for r in rows if r.action == DeliveryAction.CLAIMED and r.attempt == 2]
        assert {r.delivery_id for r in taken} == set(ids)  # taken over from the dead one
        assert {r.holder for r in taken} == {other.holder or taken[0].holder}
