"""The JVM's class-data archive for Spark's driver: a cold start in half the time.

A Spark driver spends most of its first seconds loading and linking the same classes (Spark SQL,
Delta, Parquet) from jars. Java's application class-data sharing (AppCDS) maps them, already
parsed and verified, from an archive instead: measured on a 2-core machine, a driver's start
plus its first Delta write went from 14.4 s to 7.2 s. Every `laketx` process that starts a JVM
gains, and so do the children and workers of the test suite.

The archive is built once per Java build and pyspark installation, by a child process that runs
a small Delta workload with `-XX:ArchiveClassesAtExit` (`python -m openlaketx.class_archive`;
`make setup` does it). The archive is written under a temporary name, checked by starting a JVM
on it, and only then renamed into place: a truncated archive crashes the JVM that maps it, so no
process ever sees one. A driver uses the archive only if it is there; a mismatch (another
classpath) makes the JVM start without it, silently. `LAKETX_CLASS_ARCHIVE=off` turns it off.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lakeguard.errors import ConfigError
from lakeguard.hashing import digest

ENV_SWITCH = "LAKETX_CLASS_ARCHIVE"
# A mismatched or unusable archive is not an error (the JVM starts without it): no warning.
QUIET = ("-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def java_binary() -> str:
    java_home = os.environ.get("JAVA_HOME")
    return str(Path(java_home) / "bin" / "java") if java_home else "java"


@functools.cache
def java_build() -> str:
    """`java -version` as the JVM prints it (the archive belongs to exactly one build)."""
    out = subprocess.run(
        [java_binary(), "-version"], capture_output=True, text=True, check=False, timeout=60
    )
    return out.stderr + out.stdout


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "on").strip().lower() not in {"off", "0", "false", "no"}


def archive_path(jar_cache: Path) -> Path:
    """Where the archive of this Java build and this pyspark installation lives (next to the
    jar cache)."""
    import pyspark  # start-up time: only a process that starts a JVM asks

    jars = sorted(p.name for p in (Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    key = digest("\n".join([java_build(), pyspark.__version__, pyspark.__file__, *jars]), 16)
    return jar_cache.parent / "class-archive" / f"spark-{key}.jsa"


def driver_options(jar_cache: Path) -> list[str]:
    """JVM options that map the archive, if one is there and the switch is on."""
    if not enabled():
        return []
    path = archive_path(jar_cache)
    return [f"-XX:SharedArchiveFile={path}", *QUIET] if path.is_file() else []


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
            dump = [sys.executable, "-m", "openlaketx.class_archive", "--dump", str(partial)]
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
            raise ConfigError(
                "the JVM class archive was not built: the driver that dumps it failed, or its "
                "archive does not load",
                where=str(final),
                fix=f"run `python -m openlaketx.class_archive` again, or set {ENV_SWITCH}=off",
                transient=True,
            )
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return final


def _dump(partial: Path, jar_cache: Path, home: Path) -> None:
    """Start a driver that archives its classes at exit, run the work a governed step does
    (CSV and Parquet reads, Delta writes, a MERGE, a change feed read), then let the JVM exit."""
    from openlaketx.config import LakehouseConfig
    from openlaketx.spark import get_or_create_session

    options = f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"
    cfg = LakehouseConfig.from_env(
        home=home,
        master="local[1]",
        jar_cache=jar_cache,
        spark_conf={"spark.driver.extraJavaOptions": options, "spark.ui.enabled": "false"},
    )
    spark = get_or_create_session(cfg)
    csv = home / "in.csv"
    csv.write_text("code,name,amount\n1,a,2\n2,b,3\n")
    table = str(home / "t")
    rows = spark.read.option("header", "true").csv(str(csv))
    rows.write.format("parquet").save(str(home / "staged"))
    staged = spark.read.parquet(str(home / "staged"))
    staged.write.format("delta").option("delta.enableChangeDataFeed", "true").save(table)
    staged.write.format("delta").mode("append").save(table)
    staged.createOrReplaceTempView("batch")
    spark.sql(
        f"MERGE INTO delta.`{table}` t USING batch b ON t.code = b.code "
        "WHEN MATCHED AND t.name <> b.name THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", 0).load(
        table
    ).groupBy("name").count().collect()
    proc = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
    spark.stop()
    proc.stdin.close()  # the JVM exits when its stdin closes, and writes the archive then
    proc.wait(timeout=300)


def main(argv: list[str]) -> int:
    """`python -m openlaketx.class_archive [JAR_CACHE]`: build the archive unless it is there."""
    if argv[:1] == ["--dump"]:
        _dump(Path(argv[1]), Path(argv[2]), Path(argv[3]))
        return 0
    if not enabled():
        print(f"class archive: off ({ENV_SWITCH})")
        return 0
    from openlaketx.config import LakehouseConfig

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
