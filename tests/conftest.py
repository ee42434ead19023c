"""Shared fixtures: one SparkSession per test process (never stopped by a test), temp homes.

Most tests need no Spark at all; those that do take the `lakehouse` fixture (or `spark`). Under
pytest-xdist each worker is a process of its own, with its own SparkSession, template store and
servers (docs/testing.md).
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from lakeguard.store import MetadataStore

# A developer's own settings (a home, a warehouse, a master, a tenant, a settings file, an S3
# endpoint or profile, a secret) would steer the suite's lakehouses and children: the suite
# starts from none of them, only from the switches docs/testing.md lists and the machine's
# caches. Done at import, before any fixture or server reads the environment.
SUITE_SWITCHES = (
    "LAKETX_TEST_",
    "LAKETX_PROPERTY_EXAMPLES",
    "LAKETX_PROPERTY_SEED",
    "LAKETX_KILL_SEED",
    "LAKETX_CLASS_ARCHIVE",
    "LAKETX_SPARK_CONF",
    "LAKETX_CHROMIUM",
    "LAKETX_CACHE",
    "LAKETX_JAR_CACHE",
)
ISOLATED = ("LAKETX_", "AWS_")


def isolate_environment(environ: os._Environ[str] | dict[str, str]) -> list[str]:
    """Remove every `LAKETX_*` and `AWS_*` variable but the suite's own switches; the names
    removed."""
    gone = [n for n in environ if n.startswith(ISOLATED) and not n.startswith(SUITE_SWITCHES)]
    for name in gone:
        del environ[name]
    return gone


isolate_environment(os.environ)

# No timing thresholds in tests: hypothesis's per-example deadline (200 ms) fails a pure test
# whose example waited on a busy 2-core machine, not one that is wrong.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# The tests' JVMs live seconds to minutes on tiny data: C2's compilations cost more CPU than
# they win back, so they stop at C1 (one child's run of a small job: 27 -> 14 CPU seconds),
# and the serial collector spares a busy 2-core machine the parallel GC threads.
# LAKETX_TEST_FAST_JVM=0 gives them the JVM's defaults again (to compare).
FAST_JVM = (
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    if os.environ.get("LAKETX_TEST_FAST_JVM", "1") != "0"
    else ""
)
# Likewise each query of a test reads a few rows: compiling its generated code (Janino, on a
# C1-only JVM) and re-planning it adaptively cost more than running it interpreted
# (test_governed_run.py: the JVM's CPU 64 -> 50 s). Results are the same; the engine's default
# plan is still what a real lakehouse and bench/ run. LAKETX_TEST_FAST_SQL=0 drops these.
FAST_SQL = (
    {
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.adaptive.enabled": "false",
    }
    if os.environ.get("LAKETX_TEST_FAST_SQL", "1") != "0"
    else {}
)
TEST_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.driver.memory": "2g",
    "spark.driver.extraJavaOptions": FAST_JVM,
    # a standalone cluster's executors (ignored by a local master)
    "spark.executor.extraJavaOptions": FAST_JVM,
    **FAST_SQL,
}


def conf_pairs(conf: dict[str, str]) -> str:
    """`conf` as `LAKETX_SPARK_CONF` takes it (key=value pairs separated by `;`)."""
    return ";".join(f"{key}={value}" for key, value in conf.items())


@pytest.fixture(scope="session", autouse=True)
def _children_use_the_test_conf() -> Iterator[None]:
    """Every child a test starts (a CLI, a killed run, a server) inherits the test conf
    through `LAKETX_SPARK_CONF`, unless the test sets its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(
            "LAKETX_SPARK_CONF", os.environ.get("LAKETX_SPARK_CONF") or conf_pairs(TEST_CONF)
        )
        yield


# Fixtures that start a server: a test that uses one is marked `server`.
SERVER_FIXTURES = {"postgres", "served", "collector", "s3_server"}
# The modules whose tests take longest, longest first: xdist workers take tests in this order,
# so the long ones start early and the short ones fill the end. The benchmarks come before the
# store migrations on S3: while a worker runs one, the SeaweedFS it launched as it collected
# (`pytest_itemcollected`) finishes starting (`make check`: a bench smoke on each worker).
SLOW_FIRST = (
    "test_object_store_data.py",
    "test_bench_smoke.py",
    "test_store_migrations_s3.py",
    "test_connect.py",
    "test_cluster.py",
    "test_batch_boundaries.py",
    "test_sigkill.py",
    "test_two_processes.py",
    "test_replay.py",
    "test_catch_up.py",
    "test_dashboard_browser.py",
    "test_apply_and_cli.py",
    "test_rule_counts.py",
    "test_scheduler.py",
    "test_metadata_store.py",
    "test_crash_recovery.py",
    "test_governed_run.py",
    "test_seed_vocabulary.py",
    "test_audit.py",
    "test_sql_models.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what a test's fixtures start (`spark`, `server`), whatever its module says (tests
    that start child processes carry `subprocess` themselves); the slow modules first; the
    xdist groups in the ids."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "spark" in names:
            item.add_marker(pytest.mark.spark)
        if names & SERVER_FIXTURES:
            item.add_marker(pytest.mark.server)
        # A worker starts at most one PostgreSQL and one SeaweedFS (session fixtures); a group
        # per module keeps a module's tests on one worker where they share a module fixture
        # (built once), while the modules spread over both: one group of all of them was the
        # suite's longest unit. Tests that share none spread too (a server start per worker).
        grouped = any(item.iter_markers("xdist_group"))  # by its module: that group stays
        for server in ("postgres", "s3_server"):
            if server in names and _shares_a_module_fixture(item) and not grouped:
                item.add_marker(pytest.mark.xdist_group(f"{server}-{item.path.stem}"))
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            _suffix_group(item)


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether a fixture `item` uses is built once for its module (or class)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d[-1].scope in ("module", "class", "package") for d in defs if d)


def _suffix_group(item: pytest.Item) -> None:
    """Append `@<group>` to a grouped test's id, as xdist's loadgroup means to: xdist 3.8
    writes the legacy `_nodeid`, which pytest 9.2 no longer reads (its ids are structured), so
    every group was silently ignored and each worker started its own servers
    (pytest-dev/pytest-xdist#1386). Does nothing where the id already carries a group."""
    from _pytest.nodeid import NodeId

    groups = sorted(
        {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
    )
    if (
        groups
        and "@" not in item.nodeid.rsplit("]", 1)[-1]
        and isinstance(getattr(item, "_id", None), NodeId)
    ):
        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from openlaketx.config import LakehouseConfig
    from openlaketx.spark import get_or_create_session

    home = tmp_path_factory.mktemp("spark-home")
    cfg = LakehouseConfig.from_env(home=home, master="local[2]", spark_conf=TEST_CONF)
    return get_or_create_session(cfg)


@pytest.fixture(scope="session")
def template_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lakehouse whose empty metadata store was created once for the whole session."""
    from openlaketx.lakehouse import Lakehouse

    home = tmp_path_factory.mktemp("template") / "lakehouse"
    Lakehouse.open(home=home, master="local[2]")
    return home


def open_copy(template: Path, home: Path) -> Any:
    """A fresh lakehouse at `home`, its empty store copied from the template (fast)."""
    from openlaketx.lakehouse import Lakehouse

    shutil.copytree(template / "metadata", home / "metadata")
    return Lakehouse.open(home=home, master="local[2]")


@pytest.fixture
def lakehouse(spark: Any, template_home: Path, tmp_path: Path) -> Any:
    """A fresh lakehouse of its own (own home, same SparkSession)."""
    return open_copy(template_home, tmp_path / "lakehouse")


@pytest.fixture(scope="module")
def shared_lakehouse(
    spark: Any, template_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """One lakehouse for a whole test module; its tests use distinct dataset and job ids."""
    return open_copy(template_home, tmp_path_factory.mktemp("shared") / "lakehouse")


@pytest.fixture(scope="session")
def empty_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of an empty metadata store (no Spark), created once for the process."""
    from lakeguard.store import MetadataStore

    root = tmp_path_factory.mktemp("empty-store") / "meta"
    MetadataStore("lg", str(root), "default").ensure()
    return root


def copied_store(template: Path, root: Path) -> MetadataStore:
    """A fresh empty store at `root` (namespace `lg`, tenant `default`), opened: a copy of
    `empty_store_template` (creating its tables took ~0.25 s; a copy and the `ensure` that
    checks it ~0.1 s). Tests of creation itself create their own."""
    from lakeguard.store import MetadataStore

    shutil.copytree(template, root)
    store = MetadataStore("lg", str(root), "default")
    store.ensure()
    return store


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


CELLS_YAML = """
version: 1
source_systems:
  - id: feed{s}
    options: {{root: feed}}
source_objects:
  - id: cells{s}_csv
    system: feed{s}
    locator: "incoming/*.csv"
    options: {{header: "true"}}
    dataset: bronze_cells{s}
    max_malformed_ratio: 0.2
    columns:
      - {{name: radio, type: string}}
      - {{name: cell, type: bigint}}
      - {{name: lat, type: double}}
      - {{name: updated, type: bigint}}
datasets:
  - id: bronze_cells{s}
    layer: bronze
    table: bronze.cells{s}
  - id: silver_cells{s}
    layer: silver
    table: silver.cells{s}
    parents: [bronze_cells{s}]
    business_keys: [radio, cell]
    sequence_by: updated
    filter: "cell IS NOT NULL"
rules:
  - {{id: lat_range{s}, dataset: bronze_cells{s}, type: RANGE, column: lat, min: -90, max: 90, severity: FAIL}}
  - {{id: radio_known{s}, dataset: bronze_cells{s}, type: ALLOWED_VALUES, column: radio, values: [GSM, LTE], severity: WARN}}
  - {{id: silver_unique{s}, dataset: silver_cells{s}, type: UNIQUE, columns: [radio, cell], severity: FAIL}}
jobs:
  - id: cells_job{s}
    tasks:
      - {{id: ingest, dataset: bronze_cells{s}}}
      - {{id: clean, dataset: silver_cells{s}, depends_on: [ingest]}}
"""


def cells_yaml(suffix: str = "") -> str:
    """The small bronze -> silver project, every id suffixed (tests share one store)."""
    return CELLS_YAML.format(s=suffix)


@dataclass
class Project:
    """A small project on disk: its YAML, its ids and a landing folder for deliveries."""

    yaml: Path
    suffix: str

    @property
    def bronze(self) -> str:
        return f"bronze_cells{self.suffix}"

    @property
    def silver(self) -> str:
        return f"silver_cells{self.suffix}"

    @property
    def job(self) -> str:
        return f"cells_job{self.suffix}"

    @property
    def incoming(self) -> Path:
        return self.yaml.parent / "feed" / "incoming"

    def deliver(self, name: str, rows: list[str]) -> Path:
        """Replace the landing folder's content with one CSV delivery."""
        self.incoming.mkdir(parents=True, exist_ok=True)
        for old in self.incoming.glob("*.csv"):
            old.unlink()
        return self.add(name, rows)

    def add(self, name: str, rows: list[str], header: str = "radio,cell,lat,updated") -> Path:
        """One more CSV file in the landing folder (earlier ones stay)."""
        return write(self.incoming / name, header + "\n" + "\n".join(rows) + "\n")


@pytest.fixture
def project(tmp_path: Path, request: pytest.FixtureRequest) -> Project:
    """A project whose ids are unique to the requesting test."""
    suffix = "_" + re.sub(r"[^a-z0-9]", "", request.node.name.lower())[-24:]
    return Project(write(tmp_path / "project" / "cells.yaml", cells_yaml(suffix)), suffix)


@pytest.fixture
def no_spark_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture(autouse=True)
def _progress_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """With LAKETX_TEST_PROGRESS=1, print the runner's progress with timings (slow-test hunts)."""
    if not os.environ.get("LAKETX_TEST_PROGRESS"):
        return
    import time

    from openlaketx.runner import job

    real = job.run
    last = [time.perf_counter()]

    def traced(*args: Any, **kwargs: Any) -> Any:
        inner = kwargs.get("progress")

        def progress(message: str) -> None:
            now = time.perf_counter()
            print(f"  +{now - last[0]:6.2f}s {message}", flush=True)
            last[0] = now
            if inner is not None:  # a test's own hook still runs
                inner(message)

        kwargs["progress"] = progress
        return real(*args, **kwargs)

    monkeypatch.setattr(job, "run", traced)


def assert_sound(lakehouse: Any, *datasets: str) -> None:
    """`laketx verify` on the datasets a scenario used: every invariant holds."""
    violations = lakehouse.verify(set(datasets))
    assert violations == [], "\n".join(f"{v.check} {v.where}: {v.what}" for v in violations)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real PostgreSQL server for this test session (see tests/postgres.py)."""
    from tests.postgres import start

    server = start()
    yield server
    server.stop()


# The SeaweedFS this process launched while it collected its tests (at most one), until the
# `s3_server` fixture takes it.
_EARLY_S3: list[Any] = []


def pytest_itemcollected(item: pytest.Item) -> None:
    """Launch this process's SeaweedFS as soon as a collected test needs one: its ~5 s start
    (mostly its filer waiting) overlaps the rest of the collection and the tests that run
    first, instead of stalling the first test that uses it."""
    if not _EARLY_S3 and "s3_server" in getattr(item, "fixturenames", ()):
        from tests.seaweed import launch

        _EARLY_S3.append(launch())


def pytest_collection_finish(session: pytest.Session) -> None:
    """No selected test needs the server launched early (`-m`, `-k`): it goes."""
    if not any("s3_server" in getattr(i, "fixturenames", ()) for i in session.items):
        _stop_early_s3()


def pytest_sessionfinish() -> None:
    """An early server no test of this process took (xdist sent them elsewhere) goes too."""
    _stop_early_s3()


def _stop_early_s3() -> None:
    while _EARLY_S3:
        _EARLY_S3.pop().stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A real S3-compatible server (SeaweedFS) for this test process (see tests/seaweed.py),
    the one launched during collection if there is one."""
    from tests.seaweed import launch, wait_ready

    server = _EARLY_S3.pop() if _EARLY_S3 else launch()
    try:
        server = wait_ready(server)
        yield server
    finally:
        server.stop()
