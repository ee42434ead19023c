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
for pair in sys.argv[4:]:  # set after conftest's import cleared the suite's LAKETX_ variables
    name, _, value = pair.partition("=")
    os.environ[name] = value
if point == "before_publish":
    step.publish = die
elif point == "before_version":
    Gate.record_version = die
elif point == "before_merge":  # a Spark MERGE (the big merge path)
    step.strategies.merge = die
elif point == "before_release":  # after a MERGE that changed no row
    step.release = die
elif point == "after_release":
    real = step.release

    def released(*a, **k):
        real(*a, **k)
        os._exit(137)

    step.release = released
else:
    raise SystemExit(f"unknown kill point {point}")
Lakehouse.open(home=home, master="local[1]", spark_conf=TEST_CONF).run(target)
"""

KILL_POINTS = ("before_publish", "before_version")
# a Spark MERGE's, around the release of one that changed no row
# (tests/openlaketx/loads/test_big_merge_path.py)
MERGE_KILL_POINTS = ("before_merge", "before_release", "after_release")


def kill_during_run(home: Path, point: str, target: str, env: dict[str, str] | None = None) -> None:
    """Run `target` in a child that dies at `point` (after staging / after publishing).
    `env`: variables the child sets once the suite's conftest is imported."""
    pairs = [f"{k}={v}" for k, v in (env or {}).items()]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), point, target, *pairs],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert child.returncode == 137, child.stderr[-3000:]
