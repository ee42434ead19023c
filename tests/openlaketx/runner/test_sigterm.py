"""A `laketx run` stopped by SIGTERM (a container stopped, a CI job cancelled) records itself
FAILED before it exits: no run stays RUNNING until the next run or `laketx reap`, its leases
are given back, nothing is published, and `verify` holds at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from tests.support.killing import ROOT
from tests.support.project import Project, assert_sound

pytestmark = [pytest.mark.spark, pytest.mark.subprocess]

# `laketx run`, held inside the bronze write until the test stops it
CHILD = """
import sys, time
from pathlib import Path
import openlaketx.runner.promotion as step
from openlaketx.cli import main

marker = Path(sys.argv[1])

def held(*args, **kwargs):
    marker.write_text("publishing")
    time.sleep(600)

step.publish = held
sys.argv = ["laketx", "--home", sys.argv[2], "run", sys.argv[3]]
main()
"""


def test_a_run_stopped_by_sigterm_is_failed_before_it_exits(
    lakehouse: Any, project: Project, tmp_path: Path
) -> None:
    lh, p = lakehouse, project
    lh.apply(p.yaml)
    p.add("d0.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    marker = tmp_path / "marker"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), str(lh.config.home), p.job],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert child.poll() is None, child.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the run never reached its write"
        time.sleep(0.1)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    assert "stopped by SIGTERM" in stderr
    reader = StoreReader(lh.store)
    assert reader.runs.in_flight() == []  # recorded before it exited, not left to a reaper
    (run,) = [r for r in lh.runs(10) if r.pipeline_id == p.job]
    assert run.status == "FAILED" and "SIGTERM" in (run.error_message or "")
    assert reader.versions.approved(p.bronze) is None
    assert_sound(lh, p.bronze, p.silver)
    # its leases were given back: the next run takes the datasets at once and loads the file
    assert lh.run(p.job).status == "COMPLETED"
    assert lh.read(p.bronze).count() == 2
