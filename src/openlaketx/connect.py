"""Spark Connect: a server for the engine, and the parts of the engine a Connect client cannot run.

`laketx connect-server` starts a Spark Connect server from the pyspark installation (its
`spark-connect` jar) with the session conf of `spark.session_conf`: Delta's extension and
catalog, the JDBC drivers, the same settings a driver here gets. A client
(`--remote sc://host:port`, `spark.get_or_create_session`) needs no Java; it reads and writes
files itself (staged footers, the delta-rs publish and small merges), so the server and the
client must see the lakehouse at the same paths (one machine, or shared storage).

A Connect client has no JVM of its own. What needs one is refused with a ConfigError naming
the part (`refuse_through_connect`, `connect_gap`): Spark MERGEs through Delta's `DeltaTable`
API, which needs Delta's Connect plugins on the server (`io.delta:delta-connect-server`, not in
the package registry the engine resolves from). File sources list, read headers and archive
without a JVM (`openlaketx.storage`), so they run through Connect.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NoReturn

from lakeguard.words.errors import ConfigError, first_line
from openlaketx import class_archive
from openlaketx.config import LakehouseConfig
from openlaketx.spark import (
    DRIVER_JAVA_OPTIONS,
    cached_jars,
    check_java,
    exclude_packages,
    is_connect_client,
    session_conf,
    spark_packages,
)

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
    # the server is a driver like any other: it maps the class-data archive when there is one
    archive = class_archive.driver_options(cfg.jar_cache)
    if archive:
        conf[DRIVER_JAVA_OPTIONS] = " ".join([*archive, conf.get(DRIVER_JAVA_OPTIONS, "")]).strip()
    packages = spark_packages(cfg)
    jars = cached_jars(cfg.jar_cache, packages)
    if jars is None:  # first start: Ivy resolves them into the jar cache
        wanted = [*packages, *filter(None, [conf.pop("spark.jars.packages", None)])]
        conf["spark.jars.packages"] = ",".join(wanted)
        exclude_packages(conf, packages)
    else:  # as a driver here: the cached files, no network request
        conf["spark.jars"] = ",".join([*jars, *filter(None, [conf.get("spark.jars")])])
    flags = [item for key, value in conf.items() for item in ("--conf", f"{key}={value}")]
    submit = f"{pyspark.__path__[0]}/bin/spark-submit"
    name = f"{cfg.app_name}-connect"
    return [submit, "--class", SERVER_CLASS, "--master", cfg.master, "--name", name, *flags]


def serve(cfg: LakehouseConfig, port: int, host: str = "127.0.0.1") -> NoReturn:
    """Become a Connect server in the foreground: this process is replaced by its JVM, so a
    signal sent to it (Ctrl-C, a supervisor's TERM) reaches the server itself."""
    check_java()
    command = server_command(cfg, port, host)
    os.execv(command[0], command)


def refuse_through_connect(spark: SparkSession, part: str, why: str, *, where: str) -> None:
    """Refuse `part` (of the definition at `where`) on a Connect client: `why` it cannot."""
    if is_connect_client(spark):
        raise ConfigError(f"{part} cannot run through Spark Connect: {why}", where=where, fix=FIX)


def connect_gap(exc: BaseException, part: str, *, where: str) -> ConfigError | None:
    """`exc` as the refusal of `part` when it, or an error it wraps, is a Connect client
    reaching for the JVM it does not have (`sparkContext`, py4j); None for any other failure."""
    # start-up time: pyspark loads on first use (here: a failed read)
    from pyspark.errors import PySparkAttributeError, PySparkNotImplementedError

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PySparkNotImplementedError) or (
            isinstance(seen, PySparkAttributeError)
            and seen.getCondition() == "JVM_ATTRIBUTE_NOT_SUPPORTED"
        ):
            return ConfigError(
                f"{part} cannot run through Spark Connect: it needs the driver's JVM, which a "
                f"Connect client has none of ({first_line(seen)})",
                where=where,
                fix=FIX,
            )
        seen = seen.__cause__ or seen.__context__
    return None
