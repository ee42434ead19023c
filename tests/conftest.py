"""Shared fixtures: one SparkSession per test process (never stopped by a test), temp homes.

Most tests need no Spark at all; those that do take the `lakehouse` fixture (or `spark`). Under
pytest-xdist each worker is a process of its own, with its own SparkSession, template store and
servers (docs/testing.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from tests.support.environment import TEST_CONF, conf_pairs, isolate_environment
from tests.support.project import Project, cells_yaml, open_copy, write

if TYPE_CHECKING:
    pass


isolate_environment(os.environ)

# No timing thresholds in tests: hypothesis's per-example deadline (200 ms) fails a pure test
# whose example waited on a busy 2-core machine, not one that is wrong.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


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
# By file name, whatever folder the file is in (file names are unique across tests/).
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


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A real PostgreSQL server for this test session (see tests/support/postgres.py)."""
    from tests.support.postgres import start

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
        from tests.support.seaweed import launch

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
    """A real S3-compatible server (SeaweedFS) for this test process (see tests/support/seaweed.py),
    the one launched during collection if there is one."""
    from tests.support.seaweed import launch, wait_ready

    server = _EARLY_S3.pop() if _EARLY_S3 else launch()
    try:
        server = wait_ready(server)
        yield server
    finally:
        server.stop()
