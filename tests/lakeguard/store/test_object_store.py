"""The metadata store on a real S3-compatible object store (SeaweedFS, started by the suite).

The metadata tables live under `LAKETX_METADATA_HOME=s3://...`, written by delta-rs with
conditional put; the home (warehouse, staging) stays a local folder in this slice.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

from lakeguard.records.objectstore import ObjectStoreSettings, storage_options
from lakeguard.store import MetadataStore
from lakeguard.store.deltars import CasLost, append, load, read
from lakeguard.words.errors import ConfigError, MetadataStoreError
from openlaketx.cli import app
from openlaketx.config import LakehouseConfig
from tests.support.children import lease_race
from tests.support.seaweed import ACCESS_KEY, SECRET_KEY

ROOT = Path(__file__).resolve().parents[3]
CRM = ROOT / "examples" / "crm" / "crm.yaml"
runner = CliRunner()


@pytest.fixture
def on_s3(s3_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Settings pointing at the server (children inherit them); a fresh metadata home."""
    prefix: str = s3_server.point_at(monkeypatch)
    monkeypatch.setenv("LAKETX_METADATA_HOME", prefix)
    monkeypatch.setenv("LAKETX_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return prefix


def test_apply_status_and_runs_keep_the_metadata_on_the_object_store(
    s3_server: Any, on_s3: str, tmp_path: Path
) -> None:
    applied = runner.invoke(app, ["apply", str(CRM), "--json"])
    assert applied.exit_code == 0, applied.output
    assert json.loads(applied.stdout)["applied"] is True
    status = runner.invoke(app, ["status", "--json"])
    assert status.exit_code == 0, status.output
    datasets = {row["dataset_id"] for row in json.loads(status.stdout)}
    assert {"bronze_customers", "silver_customers", "gold_value_by_region"} <= datasets
    runs = runner.invoke(app, ["runs", "--json"])
    assert runs.exit_code == 0 and json.loads(runs.stdout) == []
    # the tables are objects in the bucket, and nothing of the metadata is on local disk
    keys = s3_server.keys_under(on_s3)
    bucket_path = on_s3.removeprefix("s3://")
    assert f"{bucket_path}/lakeguard/dataset_registry/_delta_log/{0:020d}.json" in keys
    assert any(k.startswith(f"{bucket_path}/lakeguard/dataset_registry/") for k in keys)
    assert not (tmp_path / "home" / "metadata").exists()
    # a second apply of the same document changes nothing (reads its own writes on S3)
    again = runner.invoke(app, ["plan", str(CRM), "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)["summary"]
    assert summary and all(c["create"] == c["update"] == 0 for c in summary.values()), summary


def test_credentials_are_never_written_to_the_store(s3_server: Any, on_s3: str) -> None:
    assert runner.invoke(app, ["apply", str(CRM)]).exit_code == 0
    fs = s3_server.filesystem()
    keys = s3_server.keys_under(on_s3)
    assert keys
    for key in keys:
        with fs.open_input_stream(key) as stream:
            assert SECRET_KEY.encode() not in stream.read(), key


def test_leases_taken_by_two_processes_on_the_object_store_one_wins(
    on_s3: str, tmp_path: Path
) -> None:
    """Two processes read the lease table and decide to take the same lease before either
    commits (the start line of tests/support/children.py); the object store's conditional put lets
    exactly one commit land, and the loser sees the winner."""
    root = f"{on_s3}/lg"
    MetadataStore("lg", root, "default").ensure()
    with lease_race(root, tmp_path / "race", ["ds", "ds"]) as outcomes:
        assert sorted(outcomes) == ["lost", "won"]


def test_compare_and_set_appends_on_the_object_store_never_both_win(on_s3: str) -> None:
    store = MetadataStore("lg", f"{on_s3}/cas", "default")
    store.ensure()
    location = store.location("run_events")
    first, second = load("run_events", location), load("run_events", location)
    assert first.version() == second.version()
    append("run_events", location, _event_rows(store, "won"), base=first)
    with pytest.raises(CasLost):
        append("run_events", location, _event_rows(store, "lost"), base=second)
    ids = [r["event_id"] for r in store.rows("run_events")]
    assert ids == ["won"]


def test_a_kept_table_on_the_object_store_shows_another_writers_commits(on_s3: str) -> None:
    """The process keeps the snapshots its `ensure` opened; on the object store they are
    brought up to date from the log (no file identity to compare), so another writer's
    property change and rows are seen by the next `ensure`, read and append."""
    from lakeguard.records.versioning import MIGRATING_PROPERTY, StoreVersionError

    store = MetadataStore("lg", f"{on_s3}/kept", "default")
    store.ensure()
    location = store.location("run_events")
    options = storage_options(location)
    write_deltalake(location, _event_rows(store, "theirs"), mode="append", storage_options=options)
    store.ensure()
    store.append("run_events", [_event_rows(store, "mine").to_pylist()[0]])
    assert sorted(r["event_id"] for r in store.rows("run_events")) == ["mine", "theirs"]
    DeltaTable(location, storage_options=options).alter.set_table_properties(
        {MIGRATING_PROPERTY: "a test"}, raise_if_not_exists=False
    )
    with pytest.raises(StoreVersionError, match="interrupted"):
        store.ensure()


def _event_rows(store: MetadataStore, event_id: str) -> pa.Table:
    from lakeguard.records.table_defs import table_def
    from lakeguard.store.arrow import to_arrow
    from lakeguard.store.store import utcnow

    row = {
        "event_id": event_id,
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": store.tenant,
        "status": "RUNNING",
        "event_time": utcnow(),
    }
    return to_arrow(table_def("run_events"), [row])


def test_wrong_keys_fail_with_an_error_that_does_not_carry_them(
    s3_server: Any, on_s3: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MetadataStore("lg", f"{on_s3}/denied", "default")
    store.ensure()
    wrong = tmp_path / "wrong-credentials"
    wrong.write_text(
        "[default]\naws_access_key_id = laketx-test\naws_secret_access_key = not-the-secret-77\n"
    )
    monkeypatch.setenv("LAKETX_S3_CREDENTIALS_FILE", str(wrong))
    with pytest.raises(MetadataStoreError) as refused:
        MetadataStore("lg", f"{on_s3}/denied-too", "default").ensure()
    assert "not-the-secret-77" not in str(refused.value)
    with pytest.raises(MetadataStoreError, match="object store refused") as unread:
        read("run_events", store.location("run_events"))
    assert "LAKETX_S3_" in str(unread.value.fix) and "not-the-secret-77" not in str(unread.value)
    monkeypatch.setenv("LAKETX_S3_CREDENTIALS_FILE", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="LAKETX_S3_CREDENTIALS_FILE") as missing:
        storage_options(f"{on_s3}/x")
    assert missing.value.where == str(tmp_path / "missing")


def test_object_store_settings_come_from_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LAKETX_S3_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("LAKETX_S3_REGION", "eu-west-3")
    monkeypatch.setenv("LAKETX_S3_PATH_STYLE", "true")
    monkeypatch.delenv("LAKETX_S3_CREDENTIALS_FILE", raising=False)
    options = ObjectStoreSettings.from_env().storage_options()
    assert options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9"
    assert options["AWS_REGION"] == "eu-west-3"
    assert options["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] == "false"
    assert options["conditional_put"] == "etag" and options["AWS_ALLOW_HTTP"] == "true"
    assert "AWS_SECRET_ACCESS_KEY" not in options  # from the environment, by the S3 client
    assert storage_options(str(tmp_path / "meta")) is None  # a local folder needs none
    cfg = LakehouseConfig(home=tmp_path, metadata_home="s3://lake/prefix/")
    assert cfg.metadata_location == "s3://lake/prefix/lakeguard"
    assert cfg.for_tenant("acme").metadata_location == "s3://lake/prefix/tenants/acme/lakeguard"
    assert LakehouseConfig(home=tmp_path).metadata_location == str(cfg.metadata_root)
    monkeypatch.setenv("LAKETX_HOME", "s3://lake/home")
    with pytest.raises(ConfigError, match="LAKETX_METADATA_HOME"):
        LakehouseConfig.from_env()


def test_spark_gets_s3a_only_for_an_object_store_and_never_the_keys(
    s3_server: Any, on_s3: str, tmp_path: Path
) -> None:
    from openlaketx.s3a import S3A_PACKAGE
    from openlaketx.spark import exclude_packages, session_conf, spark_packages

    # the engine's own conf: without the suite's JVM options (LAKETX_SPARK_CONF)
    on_store = LakehouseConfig.from_env().model_copy(update={"spark_conf": {}})
    local = LakehouseConfig(home=tmp_path / "local")
    assert S3A_PACKAGE in spark_packages(on_store) and S3A_PACKAGE not in spark_packages(local)
    # the SDK's modules s3a uses instead of its 642 MB bundle; a user's exclusions stay
    assert "software.amazon.awssdk:s3:2.29.52" in spark_packages(on_store)
    resolving = {"spark.jars.excludes": "com.example:mine"}
    exclude_packages(resolving, spark_packages(on_store))
    excluded = resolving["spark.jars.excludes"].split(",")
    assert excluded[0] == "software.amazon.awssdk:bundle" and excluded[-1] == "com.example:mine"
    untouched: dict[str, str] = {}
    exclude_packages(untouched, spark_packages(local))
    assert untouched == {}
    conf = session_conf(on_store)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == s3_server.endpoint
    assert conf["spark.hadoop.fs.s3a.path.style.access"] == "true"
    reference = [
        f"-Daws.sharedCredentialsFile={s3_server.credentials_file}",
        "-Daws.profile=default",
    ]
    # the driver and the executors (on a cluster, other machines) name the file alike
    driver = conf["spark.driver.extraJavaOptions"].split()
    assert driver[:2] == reference and driver[2].startswith("-Dlog4j2.configurationFile=")
    assert conf["spark.executor.extraJavaOptions"].split() == reference
    assert not any(SECRET_KEY in value or ACCESS_KEY in value for value in conf.values())
    # a user's own JVM options come after the engine's, so theirs win
    mine = {f"spark.{who}.extraJavaOptions": f"-Dmine={who}" for who in ("driver", "executor")}
    theirs = session_conf(on_store.model_copy(update={"spark_conf": mine}))
    assert theirs["spark.driver.extraJavaOptions"].split() == [*driver, "-Dmine=driver"]
    assert theirs["spark.executor.extraJavaOptions"].split() == [*reference, "-Dmine=executor"]
    assert not any("s3a" in key for key in session_conf(local))
    assert "spark.executor.extraJavaOptions" not in session_conf(local)
    # staging commits with one rename per file and no `_SUCCESS` object, on the store only
    committer = "spark.hadoop.mapreduce.fileoutputcommitter"
    assert conf[f"{committer}.algorithm.version"] == "2"
    assert conf[f"{committer}.marksuccessfuljobs"] == "false"
    assert not any(key.startswith(committer) for key in session_conf(local))


def test_a_local_lakehouse_whose_source_is_on_an_object_store_gives_spark_s3a(
    tmp_path: Path,
) -> None:
    from openlaketx.lakehouse import Lakehouse
    from openlaketx.s3a import S3A_PACKAGE
    from openlaketx.spark import spark_packages

    lh = Lakehouse.open(home=str(tmp_path / "home"))
    assert S3A_PACKAGE not in spark_packages(lh.spark_config())
    doc = tmp_path / "drops.yaml"
    doc.write_text(
        "version: 1\n"
        "source_systems: [{id: drops, options: {root: 's3://lake/drops'}}]\n"
        "source_objects:\n"
        "  - {id: drop_csv, system: drops, locator: 'in/*.csv', format: csv, "
        "dataset: bronze_drops, columns: [{name: id, type: int}]}\n"
        "datasets: [{id: bronze_drops, layer: bronze}]\n"
    )
    lh.apply(doc)
    assert S3A_PACKAGE in spark_packages(lh.spark_config())
    assert not lh.config.uses_object_store  # the lakehouse itself stays local


SPARK_CHILD = """
import json, sys
from openlaketx.lakehouse import Lakehouse
lh = Lakehouse.open()
n = lh.sql('SELECT COUNT(*) AS n FROM lakeguard.dataset_registry').collect()[0]['n']
lh.spark.range(100).write.format('delta').save(sys.argv[1])
hadoop = lh.spark.sparkContext._jsc.hadoopConfiguration()
keys = [hadoop.get(f'fs.s3a.{k}') for k in ('access.key', 'secret.key', 'session.token')]
conf = dict(lh.spark.sparkContext.getConf().getAll())
print(json.dumps({'registry': n, 'conf': conf, 'hadoop_keys': keys}), flush=True)
"""


@pytest.mark.spark
@pytest.mark.subprocess
def test_spark_reads_the_metadata_and_writes_a_delta_table_on_the_object_store(
    on_s3: str,
) -> None:
    """delta-rs writes the metadata tables on S3 and a Spark process reads them through s3a,
    by name; that Spark writes a Delta table there, which delta-rs reads and appends to."""
    assert runner.invoke(app, ["apply", str(CRM)]).exit_code == 0
    table = f"{on_s3}/data/numbers"
    done = subprocess.run(
        [sys.executable, "-c", SPARK_CHILD, table],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # s3a's jars bring no logging of their own: the AWS SDK's bundle had a shaded SLF4J 1.7
    # that found no binding and said so, in three lines, in every process that used s3a
    assert "SLF4J" not in done.stdout + done.stderr, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["registry"] == 5
    # the running session's conf holds the credentials file by reference, never a key from it
    conf: dict[str, str] = got["conf"]
    assert "-Daws.sharedCredentialsFile=" in conf["spark.executor.extraJavaOptions"]
    assert not [k for k, v in conf.items() if SECRET_KEY in v or ACCESS_KEY in v]
    assert got["hadoop_keys"] == [None, None, None]
    options = storage_options(table)
    written = DeltaTable(table, storage_options=options)
    assert written.to_pyarrow_table().num_rows == 100
    write_deltalake(written, pa.table({"id": pa.array([100], pa.int64())}), mode="append")
    assert DeltaTable(table, storage_options=options).to_pyarrow_table().num_rows == 101


def test_the_services_keys_and_tenants_live_with_the_metadata_on_the_object_store(
    s3_server: Any, on_s3: str, tmp_path: Path
) -> None:
    """The control store (API keys of every tenant) is the default tenant's store: on S3 with
    the metadata, nothing of it under the local home; tenants are found there too."""
    from openlaketx.lakehouse import Lakehouse
    from openlaketx.service.tenants import known_tenants

    made = runner.invoke(
        app, ["keys", "create", "--tenant", "acme", "--scopes", "runs:read", "--json"]
    )
    assert made.exit_code == 0, made.output
    token = json.loads(made.stdout)["token"]
    listed = runner.invoke(app, ["keys", "list", "--json"])
    assert listed.exit_code == 0 and [k["tenant_id"] for k in json.loads(listed.stdout)] == ["acme"]
    keys = s3_server.keys_under(f"{on_s3}/lakeguard/api_keys")
    assert keys and not (tmp_path / "home" / "metadata").exists()
    assert not any(token.encode() in fs_read(s3_server, k) for k in keys)
    cfg = LakehouseConfig.from_env()
    assert known_tenants(cfg) == ["default"]
    Lakehouse.open(cfg.for_tenant("acme"))
    assert known_tenants(cfg) == ["acme", "default"]
    assert not (tmp_path / "home" / "tenants").exists()


def fs_read(server: Any, key: str) -> bytes:
    with server.filesystem().open_input_stream(key) as handle:
        data: bytes = handle.read()
    return data
