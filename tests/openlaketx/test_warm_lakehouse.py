"""A long-lived process warms its lakehouses before the first run (`Lakehouse.warm`, called by
`laketx serve` once Spark is warm through `Tenants.warm`): the metadata tables' snapshots are
open and every existing dataset table is registered in the Spark session, so that the first
run after a restart does not pay for them (bench/first_run.py)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from lakeguard.records.versioning import StoreVersionError
from lakeguard.store.registration import _known, is_registered
from lakeguard.store.snapshots import SNAPSHOTS
from openlaketx.service.tenants import Tenants
from openlaketx.tables import dataset_location, quarantine_name
from tests.support.project import Project


def _restarted(spark: Any, names: list[str]) -> None:
    """What a new process knows of the lakehouse: no snapshot open, no table registered."""
    SNAPSHOTS.clear()
    for name in names:
        db, table = name.split(".", 1)
        spark.sql(f"DROP TABLE IF EXISTS `{db}`.`{table}`")  # external: the files stay
        _known(spark).pop((db, table), None)


@pytest.mark.spark
def test_warming_opens_the_snapshots_and_registers_the_existing_tables(
    lakehouse: Any, project: Project
) -> None:
    lakehouse.apply(project.yaml)
    project.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    assert lakehouse.run(project.job).status == "COMPLETED"
    datasets = {d.dataset_id: d for d in lakehouse.reader.definitions.datasets()}
    names = [datasets[project.bronze].table_name, datasets[project.silver].table_name]
    spark = lakehouse.spark
    _restarted(spark, names)
    assert not any(spark.catalog.tableExists(n) for n in names)

    assert Tenants(lakehouse.config).warm() == ["default"]

    for name in names:
        db, table = name.split(".", 1)
        location = dataset_location(lakehouse.warehouse, name)
        assert is_registered(spark, db, table, location), name
        assert spark.catalog.tableExists(name), name
    assert spark.table(names[1]).count() == 2  # the name reads the table the run wrote
    opened = SNAPSHOTS._tables
    for location in lakehouse.store.locations():
        assert opened[location].snapshot is not None, location  # no first read left to pay
    # only tables that exist: nothing was quarantined, so no quarantine table is named
    assert not spark.catalog.tableExists(quarantine_name(project.bronze))


def test_a_tenant_that_cannot_be_opened_is_logged_and_the_others_are_warmed(
    no_spark_home: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from openlaketx.config import LakehouseConfig

    tenants = Tenants(LakehouseConfig.from_env(home=no_spark_home))
    warmed: list[str] = []

    class Opened:
        def __init__(self, tenant: str) -> None:
            self.tenant = tenant

        def warm(self) -> list[str]:
            warmed.append(self.tenant)
            return []

    def get(tenant: str) -> Opened:
        if tenant == "acme":
            raise StoreVersionError(
                "acme's store is of an older version", where="acme", fix="migrate"
            )
        return Opened(tenant)

    monkeypatch.setattr(tenants, "known", lambda: ["acme", "default", "zeta"])
    monkeypatch.setattr(tenants, "get", get)
    with caplog.at_level(logging.WARNING, logger="laketx.serve"):
        assert tenants.warm() == ["default", "zeta"]
    assert warmed == ["default", "zeta"]
    assert "tenant acme was not warmed" in caplog.text and "older version" in caplog.text
