"""Spark Connect: a server for the engine, and the parts of the engine a Connect client cannot run.

`laketx connect-server` starts a Spark Connect server from the pyspark installation (its
`spark-connect` jar) with the session conf of `spark.session_conf`: Delta's extension and
catalog, the JDBC drivers, the same settings a driver here gets. A client
(`--remote sc://host:port`, `spark.get_or_create_session`) needs no Java; it reads and writes
files itself (staged footers, the delta-rs publish and small merges), so the server and the
client must see the lakehouse at the same paths (one machine, or shared storage).

A Connect client has no JVM of its own. What needs one is refused with a ConfigError naming
the part (`refuse_through_connect`, `connect_gap`): file listing through Hadoop's file system
(file and http sources) and Spark MERGEs through Delta's `DeltaTable` API, which needs Delta's
Connect plugins on the server (`io.delta:delta-connect-server`, not in the package registry the
engine resolves from).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from lakeguard.errors import ConfigError, first_line
from openlaketx.config import LakehouseConfig
from openlaketx.spark import check_java, is_remote, session_conf, spark_packages

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
FIX = "run it with a driver in this process (--master, without --remote)"
MERGE_NEEDS = (
    "it goes through Delta's DeltaTable API, which needs Delta's Connect plugins on the server "
    "(io.delta:delta-connect-server), not in the package registry the engine resolves from; "
    "through Connect, only merges that delta-rs does in this process run (an upsert of at most "
    "100,000 rows into a table of at most 1,000,000, neither scd2 nor a catch-up fold)"
)


def server_command(cfg: LakehouseConfig, port: int, host: str = "127.0.0.1") -> list[str]:
    """The `spark-submit` command line of a Connect server for `cfg`, in the foreground."""
    import pyspark  # start-up time: only this command asks where Spark is

    conf = {
        **session_conf(cfg),
        "spark.connect.grpc.binding.address": host,
        "spark.connect.grpc.binding.port": str(port),
        "spark.jars.ivy": str(cfg.jar_cache),
    }
    packages = [*spark_packages(cfg), *filter(None, [conf.pop("spark.jars.packages", None)])]
    flags = [item for key, value in conf.items() for item in ("--conf", f"{key}={value}")]
    submit = f"{pyspark.__path__[0]}/bin/spark-submit"
    return [
        submit,
        *("--class", SERVER_CLASS, "--master", cfg.master, "--name", f"{cfg.app_name}-connect"),
        *("--packages", ",".join(packages)),
        *flags,
    ]


def serve(cfg: LakehouseConfig, port: int, host: str = "127.0.0.1") -> int:
    """Run a Connect server in the foreground until it ends (or Ctrl-C); its exit code."""
    check_java()
    proc = subprocess.Popen(server_command(cfg, port, host))
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        return proc.wait()


def refuse_through_connect(spark: SparkSession, part: str, why: str) -> None:
    """Refuse `part` on a Connect client (it needs the driver's JVM: `why`)."""
    if is_remote(spark):
        raise ConfigError(f"{part} cannot run through Spark Connect: {why}", where=part, fix=FIX)


def connect_gap(exc: BaseException, part: str) -> ConfigError | None:
    """`exc` as the refusal of `part` when it is a Connect client reaching for the JVM it
    does not have (`sparkContext`, py4j); None for any other failure."""
    from pyspark.errors import PySparkNotImplementedError

    if not isinstance(exc, PySparkNotImplementedError):
        return None
    return ConfigError(
        f"{part} cannot run through Spark Connect: it needs the driver's JVM, which a Connect "
        f"client has none of ({first_line(exc)})",
        where=part,
        fix=FIX,
    )
