"""The suite starts from none of a developer's own `LAKETX_*` or `AWS_*` settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.environment import isolate_environment

ROOT = Path(__file__).resolve().parents[2]


def test_a_developers_settings_are_removed_and_the_suites_switches_kept() -> None:
    environ = {
        "LAKETX_HOME": "/somewhere/mine",
        "LAKETX_MASTER": "spark://prod:7077",
        "LAKETX_SETTINGS": "/etc/laketx.yaml",
        "AWS_PROFILE": "prod",
        "AWS_SECRET_ACCESS_KEY": "not for the suite",
        "LAKETX_TEST_PROGRESS": "1",
        "LAKETX_KILL_SEED": "7",
        "LAKETX_JAR_CACHE": "/cache/ivy",
        "PATH": "/usr/bin",
    }
    gone = isolate_environment(environ)
    assert sorted(gone) == [
        "AWS_PROFILE",
        "AWS_SECRET_ACCESS_KEY",
        "LAKETX_HOME",
        "LAKETX_MASTER",
        "LAKETX_SETTINGS",
    ]
    assert environ == {
        "LAKETX_TEST_PROGRESS": "1",
        "LAKETX_KILL_SEED": "7",
        "LAKETX_JAR_CACHE": "/cache/ivy",
        "PATH": "/usr/bin",
    }


def test_importing_the_suites_fixtures_clears_the_process_environment() -> None:
    # a fresh interpreter with a developer's home and profile set: gone once conftest loads
    env = {**os.environ, "LAKETX_HOME": "/somewhere/mine", "AWS_PROFILE": "prod"}
    probe = (
        "import os, tests.conftest; "
        "print(os.environ.get('LAKETX_HOME'), os.environ.get('AWS_PROFILE'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "None"]
