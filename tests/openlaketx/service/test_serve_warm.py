"""`laketx serve` starts its Spark session at start-up, beside the server, and `/health` says
when it is warm: the first run does not pay for the JVM (docs/service.md)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from openlaketx.service.warmup import SparkState

BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.spark, pytest.mark.subprocess, pytest.mark.server]


def test_serve_warms_spark_at_start_up_and_health_says_when_it_is_ready(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [str(BIN / "laketx"), "--home", str(tmp_path / "home"), "serve", "--port", "0",
         "--scheduler-every", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        announced = server.stderr.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/api/v1)", announced)
        assert url, announced
        seen: list[str] = []
        deadline = time.monotonic() + 300
        with httpx.Client(timeout=10) as http:
            while time.monotonic() < deadline:
                health = http.get(f"{url.group(1)}/health").json()
                seen.append(health["spark"])
                if health["spark"] != SparkState.STARTING:
                    break
                time.sleep(0.5)
        # no run was asked for: the service started Spark on its own, and it got warm
        assert seen[-1] == SparkState.READY, seen
        assert SparkState.ON_DEMAND not in seen
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=120)
    assert server.returncode == 0, stderr
    assert "Spark is warm" in stderr
