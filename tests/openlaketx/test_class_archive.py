"""The driver's class-data archive: mapped only when complete, never in the user's way.

No JVM starts here: the JVM is stood in for where the test says so. Every Spark test of the
suite runs on a driver that maps the archive (`make test` builds it first).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from lakeguard.words.errors import ConfigError
from openlaketx import class_archive, class_archive_build
from openlaketx.config import LakehouseConfig
from openlaketx.spark import DRIVER_JAVA_OPTIONS, session_conf


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(class_archive, "java_build", lambda: "openjdk 17.0.15 (test)")
    monkeypatch.delenv(class_archive.ENV_SWITCH, raising=False)
    return tmp_path / "ivy"


def test_the_archive_is_mapped_only_when_it_is_there_and_the_switch_is_on(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert class_archive.driver_options(cache) == []
    path = class_archive.archive_path(cache)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    options = class_archive.driver_options(cache)
    assert options[0] == f"-XX:SharedArchiveFile={path}"
    assert "-Xshare:auto" in options  # an unusable archive is skipped, never fatal
    monkeypatch.setenv(class_archive.ENV_SWITCH, "off")
    assert class_archive.driver_options(cache) == []


def test_another_java_build_has_another_archive(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = class_archive.archive_path(cache)
    monkeypatch.setattr(class_archive, "java_build", lambda: "openjdk 21.0.4 (test)")
    assert class_archive.archive_path(cache) != first
    assert (
        first.parent == class_archive.archive_path(cache).parent == cache.parent / "class-archive"
    )


def test_an_archive_that_does_not_load_is_never_put_in_place(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A truncated archive crashes the JVM that maps it: the dump is checked before the rename,
    and a failed one leaves neither the archive nor its temporary file."""
    calls: list[list[str]] = []

    def fake_run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        calls.append(args)
        if "--dump" in args:  # the dump child writes a truncated archive
            Path(args[args.index("--dump") + 1]).write_bytes(b"trunc")
            return subprocess.CompletedProcess(args, 0)
        return subprocess.CompletedProcess(args, 134, b"", b"A fatal error has been detected")

    monkeypatch.setattr(class_archive_build.subprocess, "run", fake_run)
    with pytest.raises(ConfigError, match="does not load"):
        class_archive_build.build(cache)
    final = class_archive.archive_path(cache)
    assert not final.exists()
    assert list(final.parent.iterdir()) == []
    assert next(c for c in calls if "-version" in c)[1].startswith("-XX:SharedArchiveFile=")


def test_a_checked_archive_is_renamed_into_place_and_not_built_twice(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps: list[str] = []

    def fake_run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if "--dump" in args:
            dumps.append(args[args.index("--dump") + 1])
            assert kwargs["env"][class_archive.ENV_SWITCH] == "off"  # no archive under a dump
            Path(dumps[-1]).write_bytes(b"complete")
        return subprocess.CompletedProcess(args, 0, b"", b"")

    monkeypatch.setattr(class_archive_build.subprocess, "run", fake_run)
    path = class_archive_build.build(cache)
    assert path.read_bytes() == b"complete"
    assert not Path(dumps[0]).exists()  # renamed, not copied
    assert class_archive_build.build(cache) == path
    assert len(dumps) == 1


def test_the_users_java_options_come_after_the_engines(tmp_path: Path) -> None:
    cfg = LakehouseConfig(
        home=tmp_path, spark_conf={DRIVER_JAVA_OPTIONS: "-Dmine=1 -Xss4m"}, quiet=True
    )
    options = session_conf(cfg)[DRIVER_JAVA_OPTIONS].split()
    assert options[0].startswith("-Dlog4j2.configurationFile=")
    assert options[1:] == ["-Dmine=1", "-Xss4m"]
    loud = LakehouseConfig(home=tmp_path, quiet=False)
    assert DRIVER_JAVA_OPTIONS not in session_conf(loud)
