"""Settings of a lakehouse: where it lives, which namespace and tenant, how Spark runs.

Values come from (lowest to highest precedence) defaults, environment variables, then explicit
arguments (CLI flags). The same settings drive the embedded default and a cluster.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lakeguard.records.reach import Reach, ReachSettings, normalized
from lakeguard.words.errors import ConfigError
from openlaketx.settings import TenantLimits, env_settings

# The pinned pair (see pyproject.toml): Delta's jar for Spark 4.1, Scala 2.13.
DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
# JDBC drivers resolved with Delta's jars (more through --conf spark.jars.packages=...).
JDBC_PACKAGES = ("org.postgresql:postgresql:42.7.14",)
SPARK_PACKAGES = (DELTA_PACKAGE, *JDBC_PACKAGES)
DEFAULT_TENANT = "default"
# The most rows of a merge batch that delta-rs merges (`loads/small_merge.py`; 0: Spark merges
# every batch). Read where it is used, and checked when settings are read, so that a bad value
# fails when a lakehouse opens, not at its first merge.
SMALL_MERGE_ROWS_VARIABLE = "LAKETX_SMALL_MERGE_ROWS"
# A tenant id names folders: nothing that could climb out of the home.
TENANT_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"


def _parse_conf_pairs(text: str, origin: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"malformed Spark conf entry {item!r}",
                where=origin,
                fix="write entries as key=value separated by ';'",
            )
        pairs[key.strip()] = value.strip()
    return pairs


class LakehouseConfig(BaseModel):
    """Everything needed to open a lakehouse."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    home: Path = Field(default=Path("lakehouse"))
    metadata_home: str | None = Field(
        default=None,
        description="Where the metadata tables live when not under the home: a folder or an "
        "s3:// URI (the object store's settings: lakeguard.records.objectstore)",
    )
    warehouse_home: str | None = Field(
        default=None,
        description="Where the data tables (with their staged batches and quarantine) live "
        "when not under the home: a folder or an s3:// URI",
    )
    object_store_sources: bool = Field(
        default=False,
        description="A source is on an object store: Spark needs s3a even when the lakehouse "
        "itself is local (set by the engine from the registered sources)",
    )
    namespace: str = Field(default="lakeguard", pattern=r"^[a-z][a-z0-9_]*$")
    tenant: str = Field(
        default=DEFAULT_TENANT,
        pattern=TENANT_PATTERN,
        description="Whose lakehouse: each tenant has its own metadata and warehouse",
    )
    master: str = "local[*]"
    remote: str | None = Field(
        default=None,
        description="A Spark Connect server (sc://host:port) to run Spark through instead of a "
        "driver in this process; `master` is then the server's business",
    )
    spark_conf: dict[str, str] = Field(default_factory=dict)
    jar_cache: Path = Field(default_factory=lambda: Path.home() / ".cache" / "laketx" / "ivy")
    app_name: str = "laketx"
    quiet: bool = True
    lease_ttl_seconds: int = Field(
        default=600, ge=5, description="How long a run's lease on a dataset lasts unrenewed"
    )
    reach: ReachSettings | None = Field(
        default=None,
        description="What the tenant's metadata may name, as the operator declared it (None: "
        "the safe defaults; the default tenant is then not confined)",
    )
    run_time_limit_seconds: float | None = Field(
        default=None,
        gt=0,
        description="How long a run may work once it holds its datasets: past it, its Spark "
        "jobs are cancelled and it ends FAILED with nothing more published (None: no limit)",
    )

    @field_validator("home", mode="before")
    @classmethod
    def _local_home(cls, value: object) -> object:
        if isinstance(value, str) and "://" in value:
            raise ValueError(
                f"home {value!r} is a URI: the home (API keys, scheduler state, the demo's "
                "files) is a local folder; put the data tables on an object store with "
                "LAKETX_WAREHOUSE=s3://bucket/prefix/warehouse and the metadata with "
                "LAKETX_METADATA_HOME=s3://bucket/prefix/metadata (docs/object-store.md)"
            )
        return value

    @field_validator("metadata_home", "warehouse_home")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.startswith("s3://"):
            return value.rstrip("/")
        if "://" in value:
            raise ValueError(f"{value!r}: only local folders and s3:// URIs are supported")
        return str(Path(value).expanduser().resolve())

    @field_validator("remote")
    @classmethod
    def _remote(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("sc://"):
            raise ValueError(f"remote {value!r} is not a Spark Connect URL (sc://host:port)")
        return value

    @field_validator("home", "jar_cache")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @property
    def tenant_home(self) -> Path:
        """Where the tenant's lakehouse lives: the home itself for the default tenant (so a
        single-tenant lakehouse keeps its layout), `tenants/<tenant>/` under it otherwise."""
        if self.tenant == DEFAULT_TENANT:
            return self.home
        return self.home / "tenants" / self.tenant

    @property
    def warehouse(self) -> str:
        """Where the tenant's data tables live: `<tenant_home>/warehouse`, or under
        `warehouse_home` (`<warehouse_home>`, `<warehouse_home>/tenants/<tenant>`)."""
        if self.warehouse_home is None:
            return str(self.tenant_home / "warehouse")
        if self.tenant == DEFAULT_TENANT:
            return self.warehouse_home
        return f"{self.warehouse_home}/tenants/{self.tenant}"

    @property
    def metadata_root(self) -> Path:
        return self.tenant_home / "metadata" / self.namespace

    @property
    def uses_object_store(self) -> bool:
        """Whether any of the lakehouse lives on an object store (Spark then needs s3a)."""
        return self.object_store_sources or any(
            location.startswith("s3://")
            for location in (self.metadata_home or "", self.warehouse_home or "")
        )

    @property
    def metadata_location(self) -> str:
        """Where the tenant's metadata tables live: `metadata_root`, or under `metadata_home`
        (`<metadata_home>/<namespace>`, `<metadata_home>/tenants/<tenant>/<namespace>`)."""
        if self.metadata_home is None:
            return str(self.metadata_root)
        if self.tenant == DEFAULT_TENANT:
            return f"{self.metadata_home}/{self.namespace}"
        return f"{self.metadata_home}/tenants/{self.tenant}/{self.namespace}"

    @property
    def control_location(self) -> str:
        """The home's own metadata (API keys of every tenant, scheduler ticks): the default
        tenant's store, under the home or under `metadata_home` (then on an object store too)."""
        return self.for_tenant(DEFAULT_TENANT).metadata_location

    def tenant_reach(self) -> Reach:
        """What this tenant's metadata may name (`lakeguard.records.reach`): the operator's `reach`,
        its safe defaults where it says nothing, and what no tenant may ever name. The default
        tenant of a home is the home's own user: confined only when the operator declares a
        reach for it."""
        home = Path(os.path.realpath(self.tenant_home))
        upper = self.tenant.upper().replace("-", "_")

        def place(text: str) -> str:
            text = (
                text.replace("{tenant_home}", str(home))
                .replace("{tenant}", self.tenant)
                .replace("{TENANT}", upper)
            )
            if "://" in text:
                return normalized(text) or text
            return os.path.realpath(home / Path(text).expanduser())

        declared = self.reach
        settings = declared or ReachSettings()
        storage = tuple(place(p) for p in (settings.storage or ("feed",)))
        archive = storage if settings.archive is None else tuple(place(p) for p in settings.archive)
        folder = settings.secrets.folder
        real = Path(os.path.realpath(self.home))
        denied = [
            str(real / "metadata"),
            str(real / "warehouse"),
            str(home / "metadata"),
            str(home / "warehouse") if self.warehouse_home is None else self.warehouse,
            *(x for x in (self.metadata_home, self.warehouse_home) if x is not None),
        ]
        return Reach(
            tenant=self.tenant,
            confined=declared is not None or self.tenant != DEFAULT_TENANT,
            read=storage,
            write=archive,
            network=settings.destinations(),
            secret_prefix=settings.secrets.env_prefix or f"LAKETX_SECRET_{upper}_",
            secret_folder=place(folder if folder is not None else "secrets"),
            denied=tuple(dict.fromkeys(normalized(d) or d for d in denied)),
            tenants_root=str(real / "tenants"),
            own_home=None if self.tenant == DEFAULT_TENANT else str(home),
            home=str(real),
            tenant_home=str(home),
        )

    def for_tenant(self, tenant: str, limits: TenantLimits | None = None) -> LakehouseConfig:
        """The same settings for another tenant (its own namespace root and warehouse), with
        the reach and run time limit the operator gave it (`limits`; None: the defaults)."""
        update: dict[str, object] = {
            "tenant": LakehouseConfig.check_tenant(tenant),
            "reach": limits.reach if limits is not None else None,
        }
        if limits is not None:
            update["run_time_limit_seconds"] = limits.run_time_limit_seconds
        return self.model_copy(update=update)

    @staticmethod
    def check_tenant(tenant: str) -> str:
        if not re.fullmatch(TENANT_PATTERN, tenant):
            raise ConfigError(
                f"tenant {tenant!r} is not a tenant id",
                where="tenant",
                fix="use lower-case letters, digits, '_' and '-', starting with a letter",
            )
        return tenant

    @classmethod
    def from_env(cls, **overrides: object) -> LakehouseConfig:
        """Defaults, then the settings file `LAKETX_SETTINGS` names (its `lakehouse` section,
        and the tenant's reach), then `LAKETX_*` environment variables, then explicit
        overrides."""
        env = os.environ
        settings = env_settings()
        values: dict[str, object] = settings.lakehouse.config_values() if settings else {}
        mapping = {
            "LAKETX_HOME": "home",
            "LAKETX_METADATA_HOME": "metadata_home",
            "LAKETX_WAREHOUSE": "warehouse_home",
            "LAKETX_NAMESPACE": "namespace",
            "LAKETX_TENANT": "tenant",
            "LAKETX_MASTER": "master",
            "LAKETX_REMOTE": "remote",
            "LAKETX_JAR_CACHE": "jar_cache",
            "LAKETX_LEASE_TTL": "lease_ttl_seconds",
            "LAKETX_RUN_TIME_LIMIT": "run_time_limit_seconds",
        }
        for var, field in mapping.items():
            if env.get(var):
                values[field] = env[var]
        conf = dict(settings.lakehouse.spark_conf) if settings else {}
        conf.update(_parse_conf_pairs(env.get("LAKETX_SPARK_CONF", ""), "LAKETX_SPARK_CONF"))
        extra_conf = overrides.pop("spark_conf", None)
        if isinstance(extra_conf, dict):
            conf.update(extra_conf)
        values["spark_conf"] = conf
        values.update({k: v for k, v in overrides.items() if v is not None})
        small_merge_rows()  # refused here, before anything runs, if it is not a number
        if settings is not None:
            limits = settings.limits_of(str(values.get("tenant") or DEFAULT_TENANT))
            values.setdefault("reach", limits.reach)
            values.setdefault("run_time_limit_seconds", limits.run_time_limit_seconds)
        try:
            return cls.model_validate(values)
        except Exception as exc:
            raise ConfigError(
                f"invalid lakehouse settings: {exc}",
                fix="check the LAKETX_* values and the settings file's `lakehouse` section",
            ) from exc


def small_merge_rows() -> int | None:
    """`LAKETX_SMALL_MERGE_ROWS` as a number of rows (None: unset)."""
    text = os.environ.get(SMALL_MERGE_ROWS_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(
            f"{SMALL_MERGE_ROWS_VARIABLE}={text!r} is not a number of rows",
            where=SMALL_MERGE_ROWS_VARIABLE,
            fix="set it to a whole number (0: Spark merges every batch) or unset it",
        ) from None


def parse_conf_flags(flags: list[str]) -> dict[str, str]:
    """`--conf key=value` flags from the CLI."""
    return _parse_conf_pairs(";".join(flags), "--conf")
