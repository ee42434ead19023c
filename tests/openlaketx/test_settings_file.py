"""The settings file (`LAKETX_SETTINGS`) holds where the lakehouse lives, how Spark runs and how
the object store is reached, instead of a handful of variables; a variable that is set wins,
a flag wins over both, and no secret is ever written in the file (no Spark here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.records.objectstore import ObjectStoreSettings, storage_options
from lakeguard.words.errors import ConfigError
from openlaketx.cli import app
from openlaketx.config import LakehouseConfig
from tests.support.seaweed import ACCESS_KEY, SECRET_KEY

ROOT = Path(__file__).resolve().parents[2]
CRM = ROOT / "examples" / "crm" / "crm.yaml"
# what a user kept in seven variables, and the rest of the lakehouse's settings
SETTINGS = """
lakehouse:
  home: home
  metadata_home: s3://lake/prod/metadata
  warehouse: s3://lake/prod/warehouse
  master: spark://10.0.0.5:7077
  lease_ttl_seconds: 120
  spark_conf: {spark.executor.memory: 4g, spark.sql.shuffle.partitions: 16, spark.ui.enabled: false}
object_store:
  endpoint: http://127.0.0.1:8333
  region: eu-west-3
  path_style: true
  credentials_file: keys/credentials
  profile: laketx
"""
VARIABLES = (
    "LAKETX_HOME",
    "LAKETX_METADATA_HOME",
    "LAKETX_WAREHOUSE",
    "LAKETX_MASTER",
    "LAKETX_SPARK_CONF",
    "LAKETX_S3_ENDPOINT",
    "LAKETX_S3_REGION",
    "LAKETX_S3_PATH_STYLE",
    "LAKETX_S3_CREDENTIALS_FILE",
    "LAKETX_S3_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)


def settings_file(folder: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`text` as the settings file LAKETX_SETTINGS names, no variable of its fields set."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    path = folder / "etc" / "settings.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    monkeypatch.setenv("LAKETX_SETTINGS", str(path))
    return path


def test_the_settings_file_configures_the_lakehouse_and_the_variables_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = settings_file(tmp_path, SETTINGS, monkeypatch)
    keys = path.parent / "keys" / "credentials"
    keys.parent.mkdir()
    keys.write_text("[laketx]\naws_access_key_id = the-id\naws_secret_access_key = the-key\n")
    cfg = LakehouseConfig.from_env()
    assert cfg.home == path.parent / "home"  # a relative path is the file's folder's
    assert (cfg.metadata_home, cfg.warehouse) == (
        "s3://lake/prod/metadata",
        "s3://lake/prod/warehouse",
    )
    assert cfg.master == "spark://10.0.0.5:7077" and cfg.lease_ttl_seconds == 120
    assert cfg.spark_conf == {
        "spark.executor.memory": "4g",
        "spark.sql.shuffle.partitions": "16",  # YAML's number and boolean, as Spark's text
        "spark.ui.enabled": "false",
    }
    store = ObjectStoreSettings.from_env()
    assert store == ObjectStoreSettings(
        endpoint="http://127.0.0.1:8333",
        region="eu-west-3",
        path_style=True,
        credentials_file=str(keys),
        profile="laketx",
    )
    options = storage_options("s3://lake/prod/metadata/lakeguard") or {}
    assert options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:8333"
    assert options["AWS_SECRET_ACCESS_KEY"] == "the-key"  # read from the file it names
    # Spark is told the same, the credentials by reference
    from openlaketx.spark import session_conf

    conf = session_conf(cfg)
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:8333"
    assert f"-Daws.sharedCredentialsFile={keys}" in conf["spark.executor.extraJavaOptions"]
    assert conf["spark.executor.memory"] == "4g"

    # a variable that is set wins over the file, a flag over both
    monkeypatch.setenv("LAKETX_MASTER", "local[2]")
    monkeypatch.setenv("LAKETX_SPARK_CONF", "spark.executor.memory=1g")
    monkeypatch.setenv("LAKETX_S3_ENDPOINT", "http://127.0.0.1:9000")
    monkeypatch.setenv("LAKETX_S3_PATH_STYLE", "false")
    cfg = LakehouseConfig.from_env()
    assert cfg.master == "local[2]" and cfg.spark_conf["spark.executor.memory"] == "1g"
    assert cfg.spark_conf["spark.sql.shuffle.partitions"] == "16"
    assert LakehouseConfig.from_env(master="local[1]").master == "local[1]"
    store = ObjectStoreSettings.from_env()
    assert (store.endpoint, store.path_style, store.region) == (
        "http://127.0.0.1:9000",
        False,
        "eu-west-3",
    )


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ("lakehouse:\n  spark_conf: {spark.hadoop.fs.s3a.secret.key: %s}\n", "spark_conf"),
        ("object_store:\n  aws_secret_access_key: %s\n", "aws_secret_access_key"),
    ],
)
def test_a_secret_written_in_the_settings_file_is_refused_without_being_repeated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str, field: str
) -> None:
    settings_file(tmp_path, section % "not-the-secret-77", monkeypatch)
    # the object store's settings are read from their own section only
    readers = [LakehouseConfig.from_env]
    if field != "spark_conf":
        readers.append(ObjectStoreSettings.from_env)
    for read in readers:
        with pytest.raises(ConfigError) as refused:
            read()
        said = f"{refused.value} {refused.value.fix}"
        assert field in said and "credentials_file" in said
        assert "not-the-secret-77" not in said


def test_commands_reach_the_object_store_with_the_settings_file_alone(
    s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `LAKETX_*` variable but LAKETX_SETTINGS: `apply` and `status` keep the metadata on
    the server the file names, with the keys from the credentials file it names."""
    prefix = s3_server.fresh_prefix()
    settings_file(
        tmp_path,
        f"lakehouse: {{home: home, metadata_home: '{prefix}/metadata'}}\n"
        f"object_store: {{endpoint: '{s3_server.endpoint}', path_style: true, "
        f"credentials_file: '{s3_server.credentials_file}'}}\n",
        monkeypatch,
    )
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    runner = CliRunner()
    applied = runner.invoke(app, ["apply", str(CRM), "--json"])
    assert applied.exit_code == 0, applied.output
    status = runner.invoke(app, ["status", "--json"])
    assert status.exit_code == 0, status.output
    assert "bronze_customers" in {row["dataset_id"] for row in json.loads(status.stdout)}
    keys = s3_server.keys_under(f"{prefix}/metadata")
    assert any(
        k.endswith("/lakeguard/dataset_registry/_delta_log/00000000000000000000.json") for k in keys
    )
    assert not (tmp_path / "etc" / "home" / "metadata").exists()
    assert ACCESS_KEY not in (tmp_path / "etc" / "settings.yaml").read_text()
    assert SECRET_KEY not in applied.output + status.output
