"""The operator's settings of a home: trusted proxies, the webhook window, body caps, the
brake on failed authentications, each tenant's limits and reach, and where the lakehouse lives
and how Spark and the object store are reached (`laketx serve --settings FILE`, or
`LAKETX_SETTINGS=FILE` for every command, YAML).

Every field has a default, so a home without a settings file is fully configured. A tenant's
reach (what its metadata may name) is read by every command that opens its lakehouse, not only
by the service: the CLI, `laketx watch` and `laketx scheduler --once` confine it alike. So are
the `lakehouse` section (what the `LAKETX_*` variables say, which win over it) and the
`object_store` section (`lakeguard.records.objectstore` reads it where a table is opened).
Neither holds a secret: keys stay in the credentials file the section names.
"""

from __future__ import annotations

import os
import re
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from lakeguard.records.objectstore import SETTINGS_VARIABLE, ObjectStoreSection
from lakeguard.records.reach import ReachSettings
from lakeguard.rules.catalog.loader import parse_yaml
from lakeguard.words.errors import ConfigError

# Spark settings that carry a secret (s3a's keys, a storage account's key, a password): a
# settings file is read by every command and often kept in a repository, so it refuses them.
SECRET_CONF = re.compile(r"(secret|password|passwd|session\.token|access\.key|account\.key)", re.I)


def _spark_text(value: object) -> object:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, int | float) else value


class LakehouseSettings(BaseModel):
    """Where the lakehouse lives and how Spark runs: what `LAKETX_HOME`, `LAKETX_METADATA_HOME`,
    `LAKETX_WAREHOUSE`, `LAKETX_NAMESPACE`, `LAKETX_MASTER`, `LAKETX_REMOTE`, `LAKETX_JAR_CACHE`,
    `LAKETX_LEASE_TTL` and `LAKETX_SPARK_CONF` say (each variable that is set wins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: str | None = Field(default=None, description="The home (a local folder)")
    metadata_home: str | None = Field(default=None, description="A folder or an s3:// URI")
    warehouse: str | None = Field(default=None, description="A folder or an s3:// URI")
    namespace: str | None = None
    master: str | None = Field(default=None, description="Spark's master (spark://host:7077)")
    remote: str | None = Field(default=None, description="A Spark Connect server (sc://...)")
    jar_cache: str | None = None
    lease_ttl_seconds: int | None = Field(default=None, ge=5)
    spark_conf: dict[str, str] = Field(
        default_factory=dict, description="Spark settings, under LAKETX_SPARK_CONF and --conf"
    )

    @field_validator("spark_conf", mode="before")
    @classmethod
    def _as_text(cls, conf: object) -> object:
        # YAML reads `spark.executor.cores: 2` as a number and `true` as a boolean; Spark
        # takes text, booleans in lower case
        if not isinstance(conf, dict):
            return conf
        return {key: _spark_text(value) for key, value in conf.items()}

    @field_validator("spark_conf")
    @classmethod
    def _no_secret(cls, conf: dict[str, str]) -> dict[str, str]:
        secret = sorted(k for k in conf if SECRET_CONF.search(k))
        if secret:
            raise ValueError(
                f"{', '.join(secret)} would put a secret in the settings file: name a "
                "credentials file instead (object_store.credentials_file and profile)"
            )
        return conf

    def resolved(self, folder: Path) -> LakehouseSettings:
        """The section with its local paths taken from `folder` (the file's) if relative."""
        update = {
            name: str((folder / Path(value).expanduser()).resolve())
            for name in ("home", "metadata_home", "warehouse", "jar_cache")
            if (value := getattr(self, name)) is not None and "://" not in value
        }
        return self.model_copy(update=update)

    def config_values(self) -> dict[str, object]:
        """The fields it sets, by their name in `LakehouseConfig` (spark_conf apart)."""
        named = {"warehouse": "warehouse_home"}
        return {
            named.get(name, name): value
            for name, value in self.model_dump(exclude={"spark_conf"}).items()
            if value is not None
        }


class TenantLimits(BaseModel):
    """What one tenant may use: a request budget per API key, runs at once, and what its
    metadata may reach (`lakeguard.records.reach`; None: the safe defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int = Field(
        default=600, ge=1, description="Requests each API key may send per window"
    )
    window_seconds: int = Field(default=60, ge=1, le=86_400, description="The budget's window")
    concurrent_runs: int = Field(
        default=8, ge=1, le=10_000, description="Runs of the tenant accepted or in flight at once"
    )
    reach: ReachSettings | None = Field(
        default=None,
        description="The storage, network destinations and secrets its metadata may name "
        "(default: its own feed folder, no network, its own secrets)",
    )
    run_time_limit_seconds: float | None = Field(
        default=6 * 3600,
        gt=0,
        le=7 * 86_400,
        description="How long one of its runs may work (its Spark jobs are then cancelled and "
        "it ends FAILED); null: no limit",
    )


class NotifySettings(BaseModel):
    """How the dispatcher delivers alerts (docs/alerts.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(
        default=8, ge=1, le=100, description="Attempts of one delivery before it gives up"
    )
    backoff_seconds: float = Field(
        default=30.0, gt=0, description="The first retry's wait, doubled each attempt (jitter)"
    )
    max_wait_seconds: float = Field(
        default=3600.0, gt=0, description="The longest wait, a receiver's Retry-After included"
    )


class ServiceSettings(BaseModel):
    """`laketx serve`'s settings (docs/service.md, "Settings")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trusted_proxies: tuple[IPv4Network | IPv6Network, ...] = Field(
        default=(),
        description="Proxies (CIDRs) whose X-Forwarded-For is believed; none: the peer address "
        "is the client",
    )
    webhook_tolerance_seconds: int = Field(
        default=300, ge=1, le=86_400, description="How far a webhook's timestamp may be from now"
    )
    body_limit: int = Field(default=65_536, ge=1024, description="Bytes a request body may have")
    definitions_body_limit: int = Field(
        default=1 << 20, ge=1024, description="Bytes a document sent to /definitions may have"
    )
    failed_auth_limit: int = Field(
        default=10, ge=1, description="Failed authentications per window"
    )
    failed_auth_window_seconds: int = Field(default=60, ge=1, le=86_400)
    limits: TenantLimits = Field(
        default_factory=lambda: TenantLimits(),
        description="Every tenant's limits unless it has its own",
    )
    tenants: dict[str, TenantLimits] = Field(
        default_factory=dict, description="Limits of named tenants"
    )
    public_url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s?#]+$",
        description="Where people reach the dashboard (https://laketx.example.com): alerts "
        "link to its pages; none: they carry no link",
    )
    notify: NotifySettings = Field(
        default_factory=lambda: NotifySettings(), description="How alerts are delivered"
    )
    lakehouse: LakehouseSettings = Field(
        default_factory=lambda: LakehouseSettings(),
        description="Where the lakehouse lives and how Spark runs (`LAKETX_*` variables win)",
    )
    object_store: ObjectStoreSection | None = Field(
        default=None, description="How to reach the object store (`LAKETX_S3_*` variables win)"
    )

    def limits_of(self, tenant: str) -> TenantLimits:
        return self.tenants.get(tenant, self.limits)


def load_settings(path: str | Path) -> ServiceSettings:
    """Read and validate a settings file; every problem with its path."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"settings file {file} does not exist", where=str(file))
    data, _ = parse_yaml(file.read_text(encoding="utf-8"), str(file))
    try:
        settings = ServiceSettings.model_validate(data or {})
    except PydanticValidationError as exc:
        # the fields and what is wrong with them, never a value: one may be a key
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(document)'}: {e['msg']}"
            for e in exc.errors()
        )
        raise ConfigError(
            f"{file} is not valid settings: {problems}",
            where=str(file),
            fix="correct each field (docs/service.md lists them); a key stays in the "
            "credentials file object_store.credentials_file names, never in this file",
        ) from None
    folder = file.resolve().parent
    store = settings.object_store
    return settings.model_copy(
        update={
            "lakehouse": settings.lakehouse.resolved(folder),
            "object_store": store.resolved(folder) if store is not None else None,
        }
    )


def env_settings() -> ServiceSettings | None:
    """The settings file `LAKETX_SETTINGS` names (None when it is unset)."""
    path = os.environ.get(SETTINGS_VARIABLE, "").strip()
    return load_settings(path) if path else None
