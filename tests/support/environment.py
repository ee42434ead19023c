"""The environment the suite runs in: a developer's own `LAKETX_*` and `AWS_*` variables
removed (but the suite's switches), and the JVM and Spark settings of every test's Spark."""

from __future__ import annotations

import os

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
# (tests/openlaketx/runner/test_governed_run.py: the JVM's CPU 64 -> 50 s). Results are the
# same; the engine's default plan is still what a real lakehouse and bench/ run.
# LAKETX_TEST_FAST_SQL=0 drops these.
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
