"""Where Spark runs, chosen by settings alone (no JVM): a loopback standalone master gets the
driver's address from the engine, a Connect URL is checked, a Connect client sends only the
settings a session may change, and a Connect server gets Delta's."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeguard.words.errors import ConfigError
from openlaketx.config import LakehouseConfig
from openlaketx.connect import SERVER_CLASS, server_command
from openlaketx.spark import DELTA_EXTENSION, client_conf, session_conf

LOOPBACK = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def conf_for(master: str, **spark_conf: str) -> dict[str, str]:
    cfg = LakehouseConfig(home=Path("/tmp/h"), master=master, spark_conf=spark_conf)
    return session_conf(cfg)


@pytest.mark.parametrize(
    "master",
    ["spark://127.0.0.1:7077", "spark://localhost:7077", "spark://127.0.0.1:1,localhost:2"],
)
def test_a_standalone_master_on_loopback_gets_the_drivers_loopback_address(master: str) -> None:
    assert LOOPBACK.items() <= conf_for(master).items()


@pytest.mark.parametrize("master", ["local[*]", "spark://10.0.0.5:7077", "yarn"])
def test_other_masters_keep_sparks_own_driver_address(master: str) -> None:
    assert not LOOPBACK.keys() & conf_for(master).keys()


def test_a_users_driver_address_wins_over_the_engines() -> None:
    conf = conf_for("spark://127.0.0.1:7077", **{"spark.driver.host": "10.1.1.1"})
    assert conf["spark.driver.host"] == "10.1.1.1"


def test_the_remote_comes_from_the_environment_and_must_be_a_connect_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LAKETX_REMOTE", "sc://127.0.0.1:15002")
    assert LakehouseConfig.from_env().remote == "sc://127.0.0.1:15002"
    monkeypatch.setenv("LAKETX_REMOTE", "http://127.0.0.1:15002")
    with pytest.raises(ConfigError, match="not a Spark Connect URL"):
        LakehouseConfig.from_env()


def test_a_connect_client_sends_the_session_settings_and_leaves_the_servers_alone() -> None:
    sent = client_conf(conf_for("local[*]"))
    assert sent["spark.sql.session.timeZone"] == "UTC"
    assert sent["spark.databricks.delta.schema.autoMerge.enabled"] == "false"
    assert not {k for k in sent if not k.startswith(("spark.sql.", "spark.databricks."))}
    assert "spark.sql.extensions" not in sent and "spark.sql.warehouse.dir" not in sent


def test_a_connect_server_is_started_with_delta_on_the_given_port_and_master() -> None:
    cfg = LakehouseConfig(home=Path("/tmp/h"), master="local[2]")
    command = server_command(cfg, 15999)
    assert command[0].endswith("/pyspark/bin/spark-submit")
    assert command[command.index("--class") + 1] == SERVER_CLASS
    assert command[command.index("--master") + 1] == "local[2]"
    confs = dict(c.split("=", 1) for c in command[command.index("--name") + 2 :][1::2])
    assert confs["spark.sql.extensions"] == DELTA_EXTENSION
    assert confs["spark.connect.grpc.binding.port"] == "15999"
    assert confs["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert "delta-spark" in confs.get("spark.jars", confs.get("spark.jars.packages", ""))
