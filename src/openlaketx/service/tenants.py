"""Each tenant's lakehouse, opened on first use (its namespace and warehouse created then),
all sharing the process's one SparkSession."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from lakeguard.actors.keys import KeyStore
from lakeguard.store import MetadataStore
from lakeguard.words.errors import LakeTxError, describe
from openlaketx import storage
from openlaketx.config import DEFAULT_TENANT, LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.settings import ServiceSettings, env_settings

log = logging.getLogger("laketx.serve")


class Tenants:
    """The lakehouses of a home, one per tenant, each confined to the reach the operator's
    settings give it (`settings`, else the file `LAKETX_SETTINGS` names, else the defaults)."""

    def __init__(self, base: LakehouseConfig, settings: ServiceSettings | None = None) -> None:
        self.base = base
        self.settings = settings or env_settings() or ServiceSettings()
        self._open: dict[str, Lakehouse] = {}
        self._lock = threading.Lock()
        control = MetadataStore(base.namespace, base.control_location, DEFAULT_TENANT)
        control.ensure()
        self.control = control
        self.keys = KeyStore(control)

    def get(self, tenant: str) -> Lakehouse:
        """The tenant's lakehouse; its metadata store is created the first time (seed 003)."""
        config = self.base.for_tenant(tenant, self.settings.limits_of(tenant))
        with self._lock:
            found = self._open.get(tenant)
            if found is None:
                found = Lakehouse.open(config)
                self._open[tenant] = found
            return found

    def warm(self) -> list[str]:
        """Open each known tenant's lakehouse and warm it (`Lakehouse.warm`), so that its
        first run costs what the next do; a tenant that cannot be opened (a store to migrate,
        say) is logged and left to its first request, which says why. Returns the tenants
        warmed."""
        warmed = []
        for tenant in self.known():
            try:
                self.get(tenant).warm()
            except LakeTxError as exc:
                log.warning("tenant %s was not warmed: %s", tenant, describe(exc))
                continue
            warmed.append(tenant)
        return warmed

    def known(self) -> list[str]:
        """Tenants whose lakehouse exists: the default one, and each under `tenants/`."""
        return known_tenants(self.base)


def known_tenants(base: LakehouseConfig) -> list[str]:
    """Tenants of a home whose lakehouse exists (nothing opened: a store of an older version
    can be listed, then migrated)."""
    found = {DEFAULT_TENANT}
    if base.metadata_home is not None:  # `<metadata_home>/tenants/<tenant>/<namespace>`
        folder = storage.join(base.metadata_home, "tenants")
        found |= {
            tenant
            for tenant in storage.subfolders(folder)
            if base.namespace in storage.subfolders(storage.join(folder, tenant))
        }
        return sorted(found)
    tenants: Path = base.home / "tenants"
    if tenants.is_dir():
        found |= {p.name for p in tenants.iterdir() if (p / "metadata").is_dir()}
    return sorted(found)
