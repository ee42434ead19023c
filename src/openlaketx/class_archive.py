"""The JVM's class-data archive for Spark's driver: where it is and whether a driver maps it.

A Spark driver spends most of its first seconds loading and linking the same classes (Spark SQL,
Delta, Parquet) from jars. Java's application class-data sharing (AppCDS) maps them, already
parsed and verified, from an archive instead: measured on a 2-core machine, a driver's start
plus its first Delta write went from 14.9 s to 10.6 s. Every `laketx` process that starts a JVM
gains, and so do the workers and children of the test suite.

The archive belongs to one Java build and one pyspark installation; `class_archive_build`
makes it (`make` does, once). A driver maps it only if it is there; a mismatch (another
classpath) makes the JVM start without it, silently. `LAKETX_CLASS_ARCHIVE=off` turns it off.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from lakeguard.words.hashing import digest

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
