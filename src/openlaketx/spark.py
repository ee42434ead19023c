"""The SparkSession factory: Delta-enabled, embedded `local[*]` by default, any master by config.

Delta's jars (and the JDBC drivers of `config.JDBC_PACKAGES`) come through Spark's standard
package resolution (`spark.jars.packages`, Ivy) from Maven Central into a cache directory.
After the first successful resolution the list of
resolved jar files is remembered next to the cache, and later starts hand those files to Spark
directly (`spark.jars`), so a second start makes no network request at all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from lakeguard.records.objectstore import ObjectStoreSettings
from lakeguard.words.errors import ConfigError, EngineUnavailable, first_line
from lakeguard.words.hashing import digest
from openlaketx import class_archive
from openlaketx.config import SPARK_PACKAGES, LakehouseConfig
from openlaketx.s3a import S3A_EXCLUDES, S3A_PACKAGES, s3a_conf, s3a_java_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MIN_JAVA = 17
DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"
LOOPBACK = frozenset({"127.0.0.1", "localhost"})
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
# Settings a Spark Connect server takes when it starts; a client cannot change them.
SERVER_ONLY = frozenset(
    {
        "spark.sql.extensions",
        "spark.sql.catalog.spark_catalog",
        "spark.sql.catalogImplementation",
        "spark.sql.warehouse.dir",
    }
)


def java_major_version() -> int:
    """The major version of the `java` on PATH (or JAVA_HOME), or a one-line ConfigError."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ConfigError(
            "Java was not found",
            fix=f"install a JDK {MIN_JAVA}+ (e.g. apt-get install openjdk-17-jdk) or set JAVA_HOME",
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise ConfigError(f"cannot tell the version of {java}", fix="check the Java installation")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def check_java() -> None:
    major = java_major_version()
    if major < MIN_JAVA:
        raise ConfigError(
            f"Java {major} found, Spark 4 needs Java {MIN_JAVA}+",
            fix=f"install a JDK {MIN_JAVA}+ and put it on PATH or in JAVA_HOME",
        )


def spark_packages(cfg: LakehouseConfig) -> tuple[str, ...]:
    """The packages Spark resolves: Delta's and the JDBC drivers, and s3a's only when the
    lakehouse is on an object store (hadoop-aws and the AWS SDK's modules it uses)."""
    return (*SPARK_PACKAGES, *S3A_PACKAGES) if cfg.uses_object_store else SPARK_PACKAGES


def package_excludes(packages: tuple[str, ...]) -> tuple[str, ...]:
    """What the resolution of `packages` leaves out (`spark.jars.excludes`): with s3a, the
    SDK's 642 MB bundle hadoop-aws depends on, and what Spark ships already."""
    return S3A_EXCLUDES if S3A_PACKAGES[0] in packages else ()


def _manifest_path(cache: Path, packages: tuple[str, ...]) -> Path:
    # the exclusions are part of the set: a change of them is another set of jars
    key = ",".join([*packages, *(f"-{e}" for e in package_excludes(packages))])
    safe = f"{packages[0].replace(':', '_')}-{digest(key, 8)}"
    return cache / f"{safe}.jars"


def cached_jars(cache: Path, packages: tuple[str, ...] = SPARK_PACKAGES) -> list[str] | None:
    """Jar files of an earlier resolution of the packages, if all are still there."""
    manifest = _manifest_path(cache, packages)
    if not manifest.exists():
        return None
    jars = [line for line in manifest.read_text().splitlines() if line.strip()]
    if not jars or not all(Path(j.removeprefix("file://")).exists() for j in jars):
        return None
    return jars


def _remember_jars(cache: Path, packages: tuple[str, ...], spark_jars: str) -> None:
    jars = [j for j in spark_jars.split(",") if j.strip()]
    if jars:
        cache.mkdir(parents=True, exist_ok=True)
        _manifest_path(cache, packages).write_text("\n".join(jars) + "\n")


def master_conf(master: str) -> dict[str, str]:
    """What the driver needs for `master`. A standalone master on loopback: the driver binds
    and advertises 127.0.0.1, since the machine's host name may resolve to an address the
    loopback workers cannot reach (or to none)."""
    if not master.startswith("spark://"):
        return {}
    hosts = {part.rsplit(":", 1)[0] for part in master.removeprefix("spark://").split(",")}
    if not hosts <= LOOPBACK:
        return {}
    return {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def session_conf(cfg: LakehouseConfig) -> dict[str, str]:
    """The Spark conf for a lakehouse: Delta, in-memory catalog, warehouse under LAKETX_HOME."""
    conf = {
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        # No Hive/Derby metastore: its embedded lock admits one process. Tables are registered
        # by location on every start instead (see openlaketx.tables).
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(cfg.warehouse),
        # UTC, like the metadata: delta-rs computes generated date columns in UTC too.
        "spark.sql.session.timeZone": "UTC",
        # Staged batches are published as they are: Parquet timestamps with statistics (INT96
        # has none), and a malformed-row split written without sorting each task's rows.
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.maxConcurrentOutputFileWriters": "2",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        # Tenants share the driver: each run's jobs go to its tenant's pool (`run_scope`), and
        # FAIR shares the executors between the pools instead of queueing one tenant's jobs
        # behind another's.
        "spark.scheduler.mode": "FAIR",
        # Metadata tables are small: 50 partitions to rebuild a snapshot is pure overhead.
        "spark.databricks.delta.snapshotPartitions": "4",
        "spark.databricks.delta.schema.autoMerge.enabled": "false",
        # Row digests and merge row hashes hash every data column, a JSON source's map columns
        # too; Spark refuses maps since equal ones may list their entries in other orders. A
        # document fixes its entries' order, and a digest only tells rows apart.
        "spark.sql.legacy.allowHashOnMapType": "true",
        "spark.driver.memory": "4g",
        **master_conf(cfg.master),
    }
    # JVM options of the driver, and of both the driver and the executors
    driver_options: list[str] = []
    both: list[str] = []
    if cfg.uses_object_store:
        settings = ObjectStoreSettings.from_env()
        conf.update(s3a_conf(settings))
        # executors write the staged batches and Delta files themselves: on a cluster they
        # run on other machines, with nothing of the driver's environment, so they are told
        # the credentials file by the same reference (a path and a section, no key)
        both += s3a_java_options(settings)
    if cfg.quiet:
        conf["spark.ui.enabled"] = "false"
        log_conf = Path(__file__).with_name("log4j2.properties")
        driver_options.append(f"-Dlog4j2.configurationFile=file:{log_conf}")
    conf.update(cfg.spark_conf)
    merge_java_options(conf, DRIVER_JAVA_OPTIONS, [*both, *driver_options], cfg.spark_conf)
    merge_java_options(conf, EXECUTOR_JAVA_OPTIONS, both, cfg.spark_conf)
    return conf


def merge_java_options(
    conf: dict[str, str], key: str, engine: list[str], user: dict[str, str]
) -> None:
    """Set `conf[key]` to the engine's JVM options, then the user's (last, so that theirs
    win where both set one); no key when there are none."""
    options = " ".join(filter(None, [*engine, user.get(key, "")]))
    if options:
        conf[key] = options
    else:
        conf.pop(key, None)


def exclude_packages(conf: dict[str, str], packages: tuple[str, ...]) -> None:
    """Add the exclusions of `packages` to `conf`'s `spark.jars.excludes` (a user's stay)."""
    excludes = [*package_excludes(packages), *filter(None, [conf.get("spark.jars.excludes")])]
    if excludes:
        conf["spark.jars.excludes"] = ",".join(excludes)


def get_or_create_session(cfg: LakehouseConfig) -> SparkSession:
    """A Delta-enabled SparkSession for `cfg` (reuses the active one in this process): a
    driver here, or a Spark Connect client when `cfg.remote` is set."""
    if cfg.remote:
        return _remote_session(cfg.remote, session_conf(cfg))
    check_java()
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active

    conf = session_conf(cfg)
    archive = class_archive.driver_options(cfg.jar_cache)
    if archive:
        conf[DRIVER_JAVA_OPTIONS] = " ".join([*archive, conf.get(DRIVER_JAVA_OPTIONS, "")]).strip()
    packages = spark_packages(cfg)
    jars = cached_jars(cfg.jar_cache, packages)
    resolving = jars is None
    if jars is not None:
        conf["spark.jars"] = ",".join([*jars, *filter(None, [conf.get("spark.jars")])])
    else:
        wanted = [*packages, *filter(None, [conf.get("spark.jars.packages")])]
        conf["spark.jars.packages"] = ",".join(wanted)
        conf["spark.jars.ivy"] = str(cfg.jar_cache)
        exclude_packages(conf, packages)

    builder = SparkSession.builder.master(cfg.master).appName(cfg.app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        # resolving the jars needs the network: that may work on a retry, a bad conf not
        failure = EngineUnavailable if resolving else ConfigError
        raise failure(
            f"Spark could not start: {first_line(exc)}",
            where=f"master {cfg.master}",
            fix="check Java, access to Maven Central on the first start, and --conf values",
        ) from exc
    if cfg.quiet:
        spark.sparkContext.setLogLevel("ERROR")
    if resolving:
        _remember_jars(cfg.jar_cache, packages, spark.sparkContext.getConf().get("spark.jars", ""))
    return spark


def client_conf(conf: dict[str, str]) -> dict[str, str]:
    """What a Spark Connect client sets on its session of a session conf: the runtime SQL and
    Delta settings (the rest are the server's: `laketx connect-server` starts it with them)."""
    return {
        k: v
        for k, v in conf.items()
        if k.startswith(("spark.sql.", "spark.databricks.")) and k not in SERVER_ONLY
    }


def _remote_session(remote: str, conf: dict[str, str]) -> SparkSession:
    """A Spark Connect session on `remote` (no JVM here), checked to have Delta."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  # gRPC and pandas are installed
    except ImportError as exc:
        raise ConfigError(
            f"the Spark Connect client is not installed ({first_line(exc)})",
            where=f"remote {remote}",
            fix="pip install 'openlaketx[connect]' (pyspark[connect]: gRPC and pandas)",
        ) from exc
    # start-up time, as above; and the classic builder, not Connect's own: it also switches
    # pyspark's functions and Delta's DeltaTable to their Connect implementations
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(remote)
    for key, value in client_conf(conf).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
        extensions = spark.conf.get("spark.sql.extensions", "") or ""
    except Exception as exc:
        raise EngineUnavailable(
            f"Spark Connect server unreachable: {first_line(exc)}",
            where=f"remote {remote}",
            fix="start one with `laketx connect-server --port P`, or check host and port",
        ) from exc
    if DELTA_EXTENSION not in extensions:
        raise ConfigError(
            "the Spark Connect server has no Delta extension",
            where=f"remote {remote}",
            fix=f"start it with `laketx connect-server`, or give it {DELTA_EXTENSION} and "
            "the DeltaCatalog",
        )
    return spark


def is_connect_client(spark: SparkSession) -> bool:
    """Whether `spark` is a Spark Connect client (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


SCHEDULER_POOL = "spark.scheduler.pool"


@contextmanager
def run_scope(spark: SparkSession, *, tag: str, pool: str | None) -> Iterator[Callable[[], None]]:
    """Until the block ends, tag the Spark jobs this thread starts with `tag` and (a classic
    session) run them in the FAIR scheduler pool `pool`; yields what cancels them, callable
    from any thread. Both are per thread: the service runs each run on a worker thread of
    its own, and the thread's next run must not inherit them."""
    if is_connect_client(spark):
        # Spark Connect: the client keeps tags per thread and the server interrupts every
        # operation carrying the tag, whichever thread asks. A Connect session has no local
        # properties, so no pool: the server's own scheduler settings apply.
        def interrupt() -> None:
            spark.interruptTag(tag)

        spark.addTag(tag)
        try:
            yield interrupt
        finally:
            spark.removeTag(tag)
        return
    context = spark.sparkContext

    # Classic: SparkSession.interruptTag finds only the tags its *calling* thread added (4.1
    # names the real job tag after the thread), so a timer thread would cancel nothing;
    # SparkContext's job tags ride on the jobs' local properties and cancelJobsWithTag
    # cancels them from any thread.
    def cancel() -> None:
        context.cancelJobsWithTag(tag)

    before = context.getLocalProperty(SCHEDULER_POOL)
    context.addJobTag(tag)
    if pool is not None:
        context.setLocalProperty(SCHEDULER_POOL, pool)
    try:
        yield cancel
    finally:
        context.removeJobTag(tag)
        # None removes the property: the thread's next run starts without a pool
        context.setLocalProperty(SCHEDULER_POOL, before)  # type: ignore[arg-type]


def warm_up(spark: SparkSession, folder: Path) -> None:
    """Run, once and on a few rows in `folder`, the kinds of work a governed step does (a CSV
    read, a Parquet write, Delta writes, a MERGE, a change-feed read): the classes they load
    and the code the JIT compiles are then paid for before a real run needs them."""
    csv = folder / "in.csv"
    csv.write_text("code,name,amount\n1,a,2\n2,b,3\n")
    table = str(folder / "t")
    rows = spark.read.option("header", "true").csv(str(csv))
    rows.write.format("parquet").save(str(folder / "staged"))
    staged = spark.read.parquet(str(folder / "staged"))
    staged.write.format("delta").option("delta.enableChangeDataFeed", "true").save(table)
    staged.write.format("delta").mode("append").save(table)
    staged.createOrReplaceTempView("laketx_warm_up")
    spark.sql(
        f"MERGE INTO delta.`{table}` t USING laketx_warm_up b ON t.code = b.code "
        "WHEN MATCHED AND t.name <> b.name THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", 0).load(
        table
    ).groupBy("name").count().collect()
    spark.catalog.dropTempView("laketx_warm_up")
