"""A tenant's reach where it takes effect: the run. Rows written past apply (a direct SQL edit,
a row from before the tenant was confined), a symlink planted in the tenant's own feed, a
server that redirects elsewhere, a secret outside the tenant's scope: each run is FAILED with
the field named, nothing is read or published, no file is moved, no run stays RUNNING, and
no request reaches where it should not.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeguard.records.reach import ReachSettings
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.catalog.to_rows import document_rows
from lakeguard.words.vocabulary import JobStatus
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from tests.support.environment import TEST_CONF
from tests.support.http_server import TOKEN, Server

pytestmark = pytest.mark.spark

ALPHA_SECRET = "alpha-webhook-secret-value"
CSV = "a\nalpha-row\n"
OBJECT = "columns: [{name: a, type: string}]\n    options: {header: 'true'}"


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    """The server beta may reach, and a listener of the attacker's that it may not."""
    allowed, listener = Server(), Server()
    yield allowed, listener
    allowed.stop()
    listener.stop()


def _port(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def homes(
    spark: Any, template_home: Path, tmp_path: Path, servers: tuple[Server, Server]
) -> tuple[Lakehouse, Path]:
    home = tmp_path / "lakehouse"
    shutil.copytree(template_home / "metadata", home / "metadata")
    alpha = home / "tenants" / "alpha"
    (alpha / "feed" / "incoming").mkdir(parents=True)
    (alpha / "feed" / "incoming" / "orders_1.csv").write_text(CSV)
    (home / "tenants" / "beta" / "feed" / "orders").mkdir(parents=True)
    reach = ReachSettings(network=(f"127.0.0.1:{_port(servers[0])}",))
    config = LakehouseConfig.from_env(
        home=home, tenant="beta", master="local[2]", spark_conf=TEST_CONF, reach=reach
    )
    return Lakehouse.open(config), home


def _write_directly(lh: Lakehouse, text: str) -> None:
    """Definition rows written past apply and its checks (what `laketx sql` can do)."""
    doc = validate_text(text, "direct edit")
    for table, rows in document_rows(doc, base_dir=lh.config.tenant_home).tables():
        if rows:
            lh.store.upsert(table, rows)


def _failed_and_clean(lh: Lakehouse, dataset: str, field: str, says: str) -> str:
    result = lh.run(dataset)
    assert result.status == JobStatus.FAILED, result
    (step,) = result.steps
    assert step.error is not None
    message = step.error.message
    assert field in message and says in message, message
    assert step.data_version is None and lh.reader.versions.approved(dataset) is None
    assert all(r.status != "RUNNING" for r in lh.runs(50))
    assert lh.verify({dataset}) == []
    return message


def _alpha_untouched(home: Path) -> None:
    incoming = home / "tenants" / "alpha" / "feed" / "incoming"
    assert sorted(p.name for p in incoming.iterdir()) == ["orders_1.csv"]
    assert (incoming / "orders_1.csv").read_text() == CSV


def test_a_root_written_directly_into_another_tenant_is_refused_at_run_time(
    homes: tuple[Lakehouse, Path],
) -> None:
    lh, home = homes
    _write_directly(
        lh,
        f"""
source_systems:
  - {{id: stolen, options: {{root: "{home}/tenants/alpha/feed"}}}}
source_objects:
  - id: alpha_files
    system: stolen
    locator: "incoming/*.csv"
    archive: done
    dataset: bronze_stolen
    {OBJECT}
datasets:
  - {{id: bronze_stolen, layer: bronze}}
""",
    )
    message = _failed_and_clean(lh, "bronze_stolen", "options.root", "another tenant's home")
    assert "source_systems[source_system_id=stolen]" in message
    _alpha_untouched(home)


def test_a_symlink_planted_in_the_tenants_own_feed_reads_nothing(
    homes: tuple[Lakehouse, Path],
) -> None:
    lh, home = homes
    planted = home / "tenants" / "beta" / "feed" / "orders" / "orders_9.csv"
    planted.symlink_to(home / "tenants" / "alpha" / "feed" / "incoming" / "orders_1.csv")
    doc = home / "beta.yaml"
    doc.write_text(
        f"""
source_systems:
  - {{id: own, options: {{root: feed}}}}
source_objects:
  - id: own_files
    system: own
    locator: "orders/*.csv"
    archive: done
    dataset: bronze_own
    {OBJECT}
datasets:
  - {{id: bronze_own, layer: bronze}}
"""
    )
    lh.apply(doc)  # its definitions are fine: only the link leads elsewhere
    _failed_and_clean(lh, "bronze_own", "source_objects[own_files]", "symbolic link")
    _alpha_untouched(home)
    assert planted.is_symlink()  # not archived either


def test_a_redirect_to_another_destination_sends_nothing_there(
    homes: tuple[Lakehouse, Path],
    servers: tuple[Server, Server],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lh, _ = homes
    allowed, listener = servers
    monkeypatch.setenv("LAKETX_SECRET_BETA_TOKEN", TOKEN)
    allowed.routes.raw["/export.csv"] = (
        302,
        b"",
        "text/plain",
        {"Location": f"{listener.url}/collect.csv"},
    )
    listener.routes.token_in = "none"
    listener.routes.put_file("/collect.csv", b"a\n1\n")
    doc = lh.config.tenant_home / "beta.yaml"
    doc.write_text(
        f"""
source_systems:
  - {{id: api, kind: http, options: {{base_url: "{allowed.url}"}},
     credential_ref: LAKETX_SECRET_BETA_TOKEN}}
source_objects:
  - id: export
    system: api
    locator: export.csv
    dataset: bronze_export
    {OBJECT}
datasets:
  - {{id: bronze_export, layer: bronze}}
"""
    )
    lh.apply(doc)
    message = _failed_and_clean(lh, "bronze_export", "options.base_url", "redirected to")
    assert TOKEN not in message
    assert [s.path for s in allowed.routes.log] == ["/export.csv"]
    assert listener.routes.log == []  # the listener heard nothing, the token least of all


def test_a_secret_outside_the_scope_is_never_resolved_nor_sent(
    homes: tuple[Lakehouse, Path],
    servers: tuple[Server, Server],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Alpha's webhook secret named by a row written directly into beta's http system: the
    run is refused before anything connects, so beta's listener never receives it."""
    lh, _ = homes
    allowed, _ = servers
    monkeypatch.setenv("ALPHA_HOOK_SECRET", ALPHA_SECRET)
    allowed.routes.token_in = "none"
    allowed.routes.put_file("/orders.csv", b"a\n1\n")
    _write_directly(
        lh,
        f"""
source_systems:
  - {{id: api, kind: http, options: {{base_url: "{allowed.url}"}},
     credential_ref: ALPHA_HOOK_SECRET}}
source_objects:
  - id: orders
    system: api
    locator: orders.csv
    dataset: bronze_orders
    {OBJECT}
datasets:
  - {{id: bronze_orders, layer: bronze}}
""",
    )
    message = _failed_and_clean(
        lh, "bronze_orders", "credential_ref", "outside the tenant's secrets"
    )
    assert ALPHA_SECRET not in message
    assert allowed.routes.log == []
