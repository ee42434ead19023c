"""The benchmarks still run: each at a tiny size, asserting only that it completes and prints its
JSON (never a time: docs/testing.md). The ones that need a JVM are issue 23's to add here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.subprocess


def test_status_latency_runs_and_prints_its_json() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "status_latency.py"),
            "--runs",
            "3",
            "--repeat",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    figures = json.loads(out.stdout)
    assert figures["runs"] == 3
    assert {c["command"].split()[0] for c in figures["commands"]} >= {"status", "runs", "explain"}
    assert all(len(c["seconds"]) == 1 for c in figures["commands"])
