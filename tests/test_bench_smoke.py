"""The benchmarks still run: each at a tiny size, asserting only that it completes and prints its
JSON (never a time: docs/testing.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench_main(name: str) -> Callable[[list[str]], int]:
    """A benchmark's `main`, imported from its file (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    main: Callable[[list[str]], int] = module.main
    return main


@pytest.mark.subprocess  # the commands it times are new processes
def test_status_latency_runs_and_prints_its_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main("status_latency")(["--runs", "3", "--repeat", "1", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["runs"] == 3
    assert {c["command"].split()[0] for c in figures["commands"]} >= {"status", "runs", "explain"}
    assert all(len(c["seconds"]) == 1 for c in figures["commands"])


# In this process, on the worker's SparkSession (a bench opens its lakehouse with the session
# that is already active): a tiny size, the JSON printed, no time asserted.
SPARK_BENCHES = {
    "small_delivery": ["--rows", "5", "--rounds", "1"],
    "governed_ingest": [
        "--rows",
        "200",
        "--warmup-rows",
        "50",
        "--partitions",
        "2",
        "--overhead-rounds",
        "1",
    ],
    "catch_up": ["--versions", "3", "--keys", "20", "--warmup-keys", "0", "--into-table"],
    "history_growth": [
        "--runs",
        "20",
        "--small",
        "2",
        "--projects",
        "2",
        "--rounds",
        "1",
        "--repeat",
        "1",
    ],
    "big_merge": ["--rows", "200", "--changes", "20", "--rounds", "1", "--warmup-rounds", "0"],
    "unique_check": ["--rows", "2000", "--files", "2", "--repeat", "1"],
}
# The figures each one's JSON must name (a ratio against its baseline, at least).
SPARK_BENCH_KEYS = {
    "small_delivery": {"ratio", "step_overhead_s"},
    "governed_ingest": {"ratio", "step_overhead_s"},
    "catch_up": {"versions", "kinds"},
    "history_growth": {"step_overhead_ratio", "status_cli_ratio", "status_in_process_ratio"},
    "big_merge": {"ratio", "governed_s", "bare_s"},
    "unique_check": {"rows", "keys"},
}


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SPARK_BENCHES))
def test_a_spark_benchmark_runs_at_a_tiny_size_and_prints_its_json(
    name: str, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench_main(name)([*SPARK_BENCHES[name], "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert isinstance(figures, dict) and SPARK_BENCH_KEYS[name] <= figures.keys()


@pytest.mark.subprocess
@pytest.mark.server
def test_dashboard_speed_runs_at_a_tiny_size_and_prints_its_json() -> None:
    chromium = Path(os.environ.get("LAKETX_CHROMIUM", "/usr/lib/chromium/chromium"))
    if not chromium.exists():  # as the browser tests: CI never skips it
        missing = f"no Chromium at {chromium}: install it with `apt-get install chromium`"
        if os.environ.get("CI"):
            pytest.fail(missing, pytrace=False)
        pytest.skip(missing)
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "dashboard_speed.py"),
            "--runs",
            "6",
            "--projects",
            "2",
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
    assert figures["runs"] == 6 and figures["datasets"] == 4
    assert [p["page"] for p in figures["pages"]] == [
        "overview",
        "dataset",
        "dataset, each a first visit",
    ]
    assert all(len(p["load_ms"]) == 1 for p in figures["pages"])


# Benchmarks of cold processes and servers: their `laketx` children start JVMs of their own
# (a CLI run, `laketx serve` warming up), a minute or more even at the smallest size.
@pytest.mark.spark
@pytest.mark.subprocess
@pytest.mark.server
def test_first_run_runs_at_a_tiny_size_and_prints_its_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_main("first_run")(["--rows", "5", "--rounds", "1", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["rounds"] == 1 and "ratio" in figures
    assert set(figures["median_s"]) == {"startup", "first", "second"}


@pytest.mark.spark
@pytest.mark.subprocess
@pytest.mark.server
def test_service_latency_runs_at_a_tiny_size_and_prints_its_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tiny = ["--repeat", "1", "--history", "5", "--clients", "2", "--requests", "2"]
    small = ["--datasets", "2", "--cold-rounds", "1", "--json"]
    assert bench_main("service_latency")([*tiny, *small]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert {"trigger_to_terminal", "reads", "noop_run_without_java_s", "cold_start"} <= set(figures)
    assert figures["reads"]["history_runs"] == 5 and figures["cold_start"]["datasets"] == 2
