"""Kill a real run at a chosen point: a child process that dies with os._exit, no cleanup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import os, sys
from lakeguard.actors.gate import Gate
import openlaketx.runner.promotion as step  # where a batch is published
from openlaketx.lakehouse import Lakehouse
from tests.support.environment import TEST_CONF

def die(*_a, **_k):
    os._exit(137)

home, point, target = sys.argv[1:4]
if point == "before_publish":
    step.publish = die
elif point == "before_version":
    Gate.record_version = die
else:
    raise SystemExit(f"unknown kill point {point}")
Lakehouse.open(home=home, master="local[1]", spark_conf=TEST_CONF).run(target)
"""

KILL_POINTS = ("before_publish", "before_version")


def kill_during_run(home: Path, point: str, target: str) -> None:
    """Run `target` in a child that dies at `point` (after staging / after publishing)."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), point, target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert child.returncode == 137, child.stderr[-3000:]
