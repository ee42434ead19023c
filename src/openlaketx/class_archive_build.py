"""Building the driver's class-data archive (see `class_archive`), once per Java build.

A child process runs a small Delta workload with `-XX:ArchiveClassesAtExit`
(`python -m openlaketx.class_archive_build`; `make` runs it before the demo and the tests). The
archive is written under a temporary name, checked by starting a JVM on it, and only then
renamed into place: a truncated archive crashes the JVM that maps it, so no driver ever sees
one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lakeguard.words.errors import ConfigError, EngineUnavailable
from openlaketx.class_archive import ENV_SWITCH, QUIET, archive_path, enabled, java_binary
from openlaketx.config import LakehouseConfig
from openlaketx.spark import get_or_create_session, warm_up

MODULE = "openlaketx.class_archive_build"


def build(jar_cache: Path, *, timeout: float = 900) -> Path:
    """Build the archive unless it is there; returns its path. Safe to run in parallel: each
    builder writes its own temporary file and the last complete one wins."""
    final = archive_path(jar_cache)
    if final.is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{final.stem}.", suffix=".building", dir=final.parent)
    os.close(fd)
    partial = Path(name)
    partial.unlink()  # only the name is wanted: the JVM writes the file at its exit
    try:
        with tempfile.TemporaryDirectory(prefix="laketx-archive-") as home:
            dump = [sys.executable, "-m", MODULE, "--dump", str(partial)]
            dumped = subprocess.run(
                [*dump, str(jar_cache), home],
                check=False,
                timeout=timeout,
                stdout=subprocess.DEVNULL,
                # the dumping JVM maps no archive of its own (it would dump on top of it)
                env={**os.environ, ENV_SWITCH: "off"},
            )
        check = subprocess.run(
            [java_binary(), f"-XX:SharedArchiveFile={partial}", *QUIET, "-version"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        if dumped.returncode != 0 or check.returncode != 0 or not partial.is_file():
            raise EngineUnavailable(
                "the JVM class archive was not built: the driver that dumps it failed, or its "
                "archive does not load",
                where=str(final),
                fix=f"run `python -m {MODULE}` again, or set {ENV_SWITCH}=off",
            )
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return final


def _dump(partial: Path, jar_cache: Path, home: Path) -> None:
    """Start a driver that archives its classes at exit, run the work a governed step does
    (CSV and Parquet reads, Delta writes, a MERGE, a change feed read), then let the JVM exit."""
    options = f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"
    cfg = LakehouseConfig.from_env(
        home=home,
        master="local[1]",
        jar_cache=jar_cache,
        spark_conf={"spark.driver.extraJavaOptions": options, "spark.ui.enabled": "false"},
    )
    spark = get_or_create_session(cfg)
    warm_up(spark, home)
    proc = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
    spark.stop()
    proc.stdin.close()  # the JVM exits when its stdin closes, and writes the archive then
    proc.wait(timeout=300)


def main(argv: list[str]) -> int:
    """`python -m openlaketx.class_archive_build [JAR_CACHE]`: build the archive if missing."""
    if argv[:1] == ["--dump"]:
        _dump(Path(argv[1]), Path(argv[2]), Path(argv[3]))
        return 0
    if not enabled():
        print(f"class archive: off ({ENV_SWITCH})")
        return 0
    jar_cache = Path(argv[0]) if argv else LakehouseConfig.from_env().jar_cache
    started = time.monotonic()
    present = archive_path(jar_cache).is_file()
    try:
        path = build(jar_cache)
    except ConfigError as exc:
        print(f"class archive: {exc}", file=sys.stderr)
        return 1
    took = "" if present else f", built in {time.monotonic() - started:.0f} s"
    print(f"class archive: {path}{took}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
