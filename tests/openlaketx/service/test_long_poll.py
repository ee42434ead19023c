"""`GET /runs/{id}?wait=`: the service holds the answer until the run ends (a long poll).

The run a process executes itself is waited on through its worker (covered over HTTP in
`tests/openlaketx/service/test_service.py`); these tests cover a run of another process, which
is watched in the store, with no JVM: the wait ends when the run ends, when its time is up, or
when the service drains.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from openlaketx.config import LakehouseConfig
from openlaketx.service.runs import POLL_SECONDS, RunService
from openlaketx.service.tenants import Tenants


def service(tmp_path: Path) -> RunService:
    return RunService(Tenants(LakehouseConfig.from_env(home=tmp_path / "home")), workers=1)


class Ending:
    """`ended` of a run that another process ends after `after` questions."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked > self.after


def test_a_run_of_another_process_is_watched_until_it_ends(tmp_path: Path) -> None:
    runs = service(tmp_path)
    ending = Ending(after=2)
    started = time.monotonic()
    runs.wait_for("f" * 32, 60, ended=ending)
    assert ending.asked == 3  # asked once more after each pause, not polled in a tight loop
    assert time.monotonic() - started >= 2 * POLL_SECONDS


def test_the_wait_ends_when_its_time_is_up_with_the_run_still_going(tmp_path: Path) -> None:
    runs = service(tmp_path)
    never = Ending(after=1_000_000)
    started = time.monotonic()
    runs.wait_for("e" * 32, 0.6, ended=never)
    waited = time.monotonic() - started
    assert 0.6 <= waited < 30 and never.asked >= 2


def test_a_draining_service_lets_its_long_polls_go(tmp_path: Path) -> None:
    runs = service(tmp_path)
    never = Ending(after=1_000_000)
    done = threading.Event()

    def poll() -> None:
        runs.wait_for("d" * 32, 600, ended=never)
        done.set()

    threading.Thread(target=poll, daemon=True).start()
    while never.asked == 0:
        time.sleep(0.01)
    runs.drain(timeout=5)
    assert done.wait(30), "a long poll outlived the drain"
    assert not runs.accepting
