"""The benchmarks still run: each at a tiny size, asserting only that it completes, prints its
JSON and keeps the same figures as one results file (never a time: docs/testing.md). Every run
here writes its results file into the test's temporary folder, never into the repository."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench_main(name: str) -> Callable[[list[str]], int]:
    """A benchmark's `main`, imported from its file (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    main: Callable[[list[str]], int] = module.main
    return main


# what a results file holds (bench/results.py), and how it is named
RUN_KEYS = {"bench", "time", "commit", "dirty", "machine", "args", "figures"}
MACHINE_KEYS = {"hostname", "cpu_count", "memory_bytes", "load_average", "platform", "python"}
RUN_NAME = re.compile(r"\d{8}T\d{6}Z-([0-9a-f]{7}|unknown)(-\d+)?\.json")


def recorded(folder: Path, name: str, printed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one results file a run of `name` wrote under `folder`: its name, what it must hold,
    and the figures the run printed (when given)."""
    files = sorted(folder.rglob("*"))
    assert [f.relative_to(folder).as_posix() for f in files if f.is_dir()] == [name]
    files = [f for f in files if f.is_file()]
    assert len(files) == 1 and RUN_NAME.fullmatch(files[0].name), files
    run: dict[str, Any] = json.loads(files[0].read_text())
    assert run.keys() >= RUN_KEYS and run["bench"] == name
    assert run["machine"].keys() >= MACHINE_KEYS
    assert run["machine"]["cpu_count"] == os.cpu_count()
    assert "json" in run["args"] and "results" not in run["args"]
    if printed is not None:
        assert run["figures"] == printed
    return run


def test_a_run_is_kept_as_one_file_and_no_results_writes_none(tmp_path: Path) -> None:
    """bench/results.py alone (no Spark): the file's name, its fields, `--no-results`."""
    results = bench_main("results")
    folder = tmp_path / "results"
    argv = ["unit_bench", "ratio=1.5", "label=quiet", "--arg", "rows=3", "--results", str(folder)]
    assert results(argv) == 0
    run = json.loads(next(folder.glob("unit_bench/*.json")).read_text())
    assert run["figures"] == {"ratio": 1.5, "label": "quiet"} and run["args"] == {"rows": 3}
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    assert run["commit"] == (head or None) and run["dirty"] in (True, False, None)
    assert run["time"].endswith("+00:00") and isinstance(run["machine"]["memory_bytes"], int)
    assert results([*argv, "--no-results"]) == 0  # a second run would be a second file: none
    assert len(list(folder.rglob("*.json"))) == 1


def test_a_path_argument_inside_the_repository_is_kept_relative(tmp_path: Path) -> None:
    """A committed results file names no folder of the machine that ran it (the default
    `--data` of governed_ingest is inside the repository); a path elsewhere stays as given."""
    spec = importlib.util.spec_from_file_location("bench_results", ROOT / "bench" / "results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    args = {"data": ROOT / "bench" / "data", "elsewhere": tmp_path, "results": str(tmp_path)}
    path = module.record("unit_bench", {"ratio": 1.0}, args)
    run = json.loads(path.read_text())
    assert run["args"] == {"data": "bench/data", "elsewhere": str(tmp_path)}
    assert str(ROOT) not in path.read_text()


BENCHES = sorted(
    p.stem
    for p in (ROOT / "bench").glob("*.py")
    if p.stem not in ("results", "recorded_history", "place")
)


@pytest.mark.parametrize("name", BENCHES)
def test_every_benchmark_keeps_its_figures_and_takes_the_results_flags(name: str) -> None:
    """Every benchmark's `main` adds `--results`/`--no-results` and calls `record` (read from
    its source: the slow ones run only in the lanes with a JVM)."""

    def calls(node: ast.AST) -> list[tuple[str, ast.Call]]:
        return [
            (n.func.id, n)
            for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]

    tree = ast.parse((ROOT / "bench" / f"{name}.py").read_text())
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert "add_flags" in {called for called, _ in calls(tree)}
    recorded_as = [
        c.args[0].value if c.args and isinstance(c.args[0], ast.Constant) else None
        for called, c in calls(main)
        if called == "record"
    ]
    assert recorded_as == [name], f"{name}'s main records as {recorded_as}"


@pytest.mark.subprocess  # the commands it times are new processes
def test_status_latency_runs_and_prints_its_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--runs", "3", "--repeat", "1", "--json", "--results", str(tmp_path)]
    assert bench_main("status_latency")(argv) == 0
    figures = json.loads(capsys.readouterr().out)
    recorded(tmp_path, "status_latency", figures)
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
    "merge_width": ["--rows", "200", "--changes", "20", "--rounds", "1", "--warmup-rounds", "0"],
}
# The figures each one's JSON must name (a ratio against its baseline, at least).
SPARK_BENCH_KEYS = {
    "small_delivery": {"ratio", "step_overhead_s"},
    "governed_ingest": {"ratio", "step_overhead_s"},
    "catch_up": {"versions", "kinds"},
    "history_growth": {"step_overhead_ratio", "status_cli_ratio", "status_in_process_ratio"},
    "big_merge": {"ratio", "governed_s", "bare_s"},
    "unique_check": {"rows", "keys"},
    "merge_width": {"ratio", "seconds", "table_bytes"},
}


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SPARK_BENCHES))
def test_a_spark_benchmark_runs_at_a_tiny_size_and_prints_its_json(
    name: str, spark: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    # governed_ingest keeps its generated CSV for the next run: here not in the repository
    data = ["--data", str(tmp_path / "data")] if name == "governed_ingest" else []
    argv = [*SPARK_BENCHES[name], *data, "--json", "--results", str(results)]
    assert bench_main(name)(argv) == 0
    figures = json.loads(capsys.readouterr().out)
    assert isinstance(figures, dict) and SPARK_BENCH_KEYS[name] <= figures.keys()
    recorded(results, name, figures)


@pytest.mark.subprocess
@pytest.mark.server
def test_dashboard_speed_runs_at_a_tiny_size_and_prints_its_json(tmp_path: Path) -> None:
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
            "--results",
            str(tmp_path),
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
    recorded(tmp_path, "dashboard_speed", figures)


# Benchmarks of cold processes and servers: their `laketx` children start JVMs of their own
# (a CLI run, `laketx serve` warming up), a minute or more even at the smallest size.
@pytest.mark.spark
@pytest.mark.subprocess
@pytest.mark.server
def test_first_run_runs_at_a_tiny_size_and_prints_its_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--rows", "5", "--rounds", "1", "--json", "--results", str(tmp_path)]
    assert bench_main("first_run")(argv) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["rounds"] == 1 and "ratio" in figures
    assert set(figures["median_s"]) == {"startup", "first", "second"}
    recorded(tmp_path, "first_run", figures)


@pytest.mark.spark
@pytest.mark.subprocess
@pytest.mark.server
def test_service_latency_runs_at_a_tiny_size_and_prints_its_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tiny = ["--repeat", "1", "--history", "5", "--clients", "2", "--requests", "2"]
    small = ["--datasets", "2", "--cold-rounds", "1", "--json", "--results", str(tmp_path)]
    assert bench_main("service_latency")([*tiny, *small]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert {"trigger_to_terminal", "reads", "noop_run_without_java_s", "cold_start"} <= set(figures)
    assert figures["reads"]["history_runs"] == 5 and figures["cold_start"]["datasets"] == 2
    recorded(tmp_path, "service_latency", figures)
