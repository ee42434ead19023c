"""What every part of the `MetadataStore` shares: which namespace, root and tenant it is,
where each table lives, the clock, and the tenant filter every read starts from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Self, TypeVar

from lakeguard.records.reach import Reach
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.table_defs import load_table_defs
from lakeguard.store import deltars
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.quoting import quote

Filter = deltars.Filter
CAS_ATTEMPTS = 50
R = TypeVar("R", bound=RuntimeRow)
D = TypeVar("D", bound=DefinitionRow)


def utcnow() -> datetime:
    """Timestamps in metadata are naive UTC (the session time zone is UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


class StoreBase:
    """One namespace's tables as one tenant sees them: names, locations and the clock, and
    what the tenant's definitions may reach (`lakeguard.records.reach`; None: nothing is checked, as
    for the home's control store, which holds no definitions)."""

    def __init__(self, namespace: str, root: str, tenant: str, reach: Reach | None = None) -> None:
        self.namespace = namespace
        self.root = root.rstrip("/")
        self.tenant = tenant
        self.reach = reach
        self._ready = False

    def tenant_reach(self) -> Reach:
        """What the tenant's definitions may reach. A store opened without one (a tool's or a
        test's, on the home's own tenant) reaches what it did before tenants were confined;
        any other tenant's must have been opened with its reach."""
        if self.reach is not None:
            return self.reach
        if self.tenant == "default":
            return Reach(tenant=self.tenant, confined=False)
        raise MetadataStoreError(
            f"the store of tenant {self.tenant} was opened without the tenant's reach",
            fix="open it through Lakehouse.open, which sets it from the settings",
        )

    def as_tenant(self, tenant: str) -> Self:
        """The same tables (already ensured) seen as another tenant's: rows written through it
        are that tenant's (the home's control store keeps every tenant's API keys)."""
        other = type(self)(self.namespace, self.root, tenant)
        other._ready = self._ready
        return other

    def qualified(self, table: str) -> str:
        """The name Spark sessions know the table by (`lakeguard`.`run_history`)."""
        return f"{quote(self.namespace)}.{quote(table)}"

    def location(self, table: str) -> str:
        return f"{self.root}/{table}"

    def locations(self) -> list[str]:
        """Where each of the store's tables is."""
        return [self.location(t) for t in self.tables()]

    @staticmethod
    def tables() -> list[str]:
        return sorted(load_table_defs())

    def _require_ready(self) -> None:
        if not self._ready:
            raise MetadataStoreError(
                "the metadata store is not initialised",
                fix="call MetadataStore.ensure() (Lakehouse.open does this)",
            )

    def _filters(self, filters: Sequence[Filter], all_tenants: bool = False) -> list[Filter]:
        own = [] if all_tenants else [("tenant_id", "=", self.tenant)]
        return [*own, *filters]

    def now(self) -> datetime:
        return utcnow()

    @staticmethod
    def since(days: int, now: datetime | None = None) -> date:
        """The first partition date of a look-back window of `days` days."""
        return ((now or utcnow()) - timedelta(days=days)).date()
