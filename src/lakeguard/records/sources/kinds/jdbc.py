"""A database over JDBC: the table as a snapshot, or its rows above a watermark.

Progress: the highest watermark a batch read (the generic watermark mark). The password is
the system's `credential_ref`; the system's other options are JDBC connection properties.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from lakeguard.records.reach import Reach
from lakeguard.records.schema.types import is_numeric
from lakeguard.records.sources.kinds.base import (
    ObjectFacts,
    ObjectOptions,
    SourceKind,
    SystemOptions,
)
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import SourceKindName, SourceLoad

_SECRET_KEYS = ("password", "pwd", "secret", "token")
# The JDBC subprotocols whose urls name their hosts as //host[:port][,host[:port]...]/...,
# each with its default port and its driver: what a confined tenant may connect with.
SUBPROTOCOLS: dict[str, tuple[int, str]] = {
    "postgresql": (5432, "org.postgresql.Driver"),
    "mysql": (3306, "com.mysql.cj.jdbc.Driver"),
    "mariadb": (3306, "org.mariadb.jdbc.Driver"),
    "sqlserver": (1433, "com.microsoft.sqlserver.jdbc.SQLServerDriver"),
    "redshift": (5439, "com.amazon.redshift.jdbc42.Driver"),
}
# Connection properties a confined tenant may set: plain settings of a connection. Others can
# name files of the server (sslcert, sslrootcert, keytab, loggerFile) or classes to load
# (socketFactory, sslfactory, authenticationPluginClassName), so they are refused.
SAFE_PROPERTIES = frozenset(
    p.lower()
    for p in (
        "url",
        "driver",
        "user",
        "ssl",
        "sslmode",
        "connectTimeout",
        "socketTimeout",
        "loginTimeout",
        "tcpKeepAlive",
        "ApplicationName",
        "currentSchema",
        "readOnly",
        "targetServerType",
        "prepareThreshold",
        "defaultRowFetchSize",
        "stringtype",
        "encrypt",
        "trustServerCertificate",
        "databaseName",
        "useSSL",
        "requireSSL",
        "serverTimezone",
        "characterEncoding",
    )
)
# Spark JDBC reader options a confined tenant may set on a source object.
SAFE_READ_OPTIONS = frozenset(
    p.lower()
    for p in (
        "fetchsize",
        "queryTimeout",
        "customSchema",
        "sessionInitStatement",
        "pushDownPredicate",
        "pushDownAggregate",
        "pushDownLimit",
        "pushDownOffset",
        "pushDownTableSample",
        "preferTimestampNTZ",
    )
)
_HOSTS = re.compile(r"^jdbc:([a-z0-9]+):(?:thin:)?//([^/;?]*)", re.IGNORECASE)


def url_destinations(url: str) -> tuple[str, list[tuple[str, int]]] | None:
    """(subprotocol, [(host, port)]) a JDBC url connects to; None when its form does not say
    (a file database, a TNS descriptor, an unknown subprotocol without ports)."""
    found = _HOSTS.match(url)
    if found is None:
        return None
    protocol, authority = found.group(1).lower(), found.group(2)
    default = SUBPROTOCOLS.get(protocol, (0, ""))[0]
    hosts = []
    for part in authority.split(","):
        part = part.rsplit("@", 1)[-1].strip()  # user@host: the host
        if part.startswith("["):
            host, _, rest = part[1:].partition("]")
            port_text = rest.removeprefix(":")
        elif part.count(":") == 1:
            host, port_text = part.split(":")
        else:
            host, port_text = part, ""
        if not host:
            return None
        if port_text and not port_text.isdigit():
            return None
        port = int(port_text) if port_text else default
        if not 0 < port < 65536:
            return None
        hosts.append((host, port))
    return (protocol, hosts) if hosts else None


class JdbcOptions(SystemOptions):
    """The connection: url, driver, user, and any other JDBC connection property (text)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    url: str = Field(description="jdbc:<subprotocol>:... (never with a password in it)")
    driver: str | None = Field(default=None, description="Default: by the url's subprotocol")
    user: str | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return value if value is None or isinstance(value, str) else str(value)

    def properties(self) -> dict[str, str]:
        """Every option as a JDBC connection property (extra ones included)."""
        return {k: str(v) for k, v in self.model_dump(exclude_none=True).items()}


class JdbcObjectOptions(ObjectOptions):
    partition_column: str | None = Field(
        default=None, description="Read in parallel, split on this numeric column"
    )
    lower_bound: int | None = None
    upper_bound: int | None = None
    num_partitions: int | None = Field(default=None, ge=1, le=256)
    fetch_size: int | None = Field(default=None, ge=1)


def url_properties(url: str) -> list[str]:
    """The connection properties a JDBC url sets itself (`?k=v&k=v`, or `;k=v;k=v`)."""
    found = []
    rest = url.split("?", 1)[1] if "?" in url else ""
    for part in re.split(r"[&;]", rest) + url.split("?", 1)[0].split(";")[1:]:
        name = part.split("=", 1)[0].strip()
        if name:
            found.append(name)
    return found


def _reach_refusals(options: JdbcOptions, reach: Reach) -> list[tuple[str, str]]:
    """(option, why) for each thing a confined tenant's connection may not do."""
    found = url_destinations(options.url)
    if found is None:
        return [
            (
                "url",
                "the url does not say which host it connects to (jdbc:<subprotocol>://host:port/"
                f"...; {', '.join(SUBPROTOCOLS)} are known)",
            )
        ]
    protocol, hosts = found
    refusals = []
    for host, port in hosts:
        why = reach.name_refusal(host, port)
        if why is not None:
            refusals.append(("url", f"{why}; {reach.network_fix()}"))
    driver = SUBPROTOCOLS.get(protocol, (0, None))[1]
    if protocol not in SUBPROTOCOLS:
        known = ", ".join(SUBPROTOCOLS)
        refusals.append(("url", f"jdbc:{protocol} is not a known database ({known})"))
    elif options.driver is not None and options.driver != driver:
        refusals.append(("driver", f"a jdbc:{protocol} url is read with {driver} only"))
    for key in options.properties():
        if key.lower() not in SAFE_PROPERTIES:
            refusals.append(
                (key, f"connection property {key!r} may name files or load code of the server")
            )
    for key in url_properties(options.url):
        if key.lower() not in SAFE_PROPERTIES or key.lower() in ("url", "driver"):
            refusals.append(
                ("url", f"the url's property {key!r} may name files or load code of the server")
            )
    return refusals


class JdbcKind(SourceKind[JdbcOptions, JdbcObjectOptions]):
    name: ClassVar[SourceKindName] = SourceKindName.JDBC
    formats: ClassVar[tuple[str, ...]] = ("jdbc",)
    loads: ClassVar[tuple[SourceLoad, ...]] = (SourceLoad.FULL, SourceLoad.INCREMENTAL)
    system_options = JdbcOptions
    object_options = JdbcObjectOptions
    credential: ClassVar[str | None] = "the database user's password"
    watermarks: ClassVar[bool] = True

    def check_system(
        self, options: JdbcOptions, credential_ref: str | None, loc: tuple[Any, ...]
    ) -> list[Problem]:
        problems = []
        if not options.url.startswith("jdbc:"):
            problems.append(Problem((*loc, "options", "url"), "a jdbc system needs a jdbc: url"))
        if "password=" in options.url.lower():
            problems.append(
                Problem((*loc, "options", "url"), "the url carries a password; use credential_ref")
            )
        for key in options.properties():
            if key.lower() in _SECRET_KEYS:
                problems.append(
                    Problem(
                        (*loc, "options", key),
                        f"option {key!r} would store a secret; use credential_ref",
                    )
                )
        return problems

    def check_object(
        self, options: JdbcObjectOptions, facts: ObjectFacts, loc: tuple[Any, ...]
    ) -> list[Problem]:
        if options.partition_column is None:
            return []
        if not is_numeric(facts.columns.get(options.partition_column, "string")):
            return [Problem((*loc, "partition_column"), "must be a declared numeric column")]
        if None in (options.lower_bound, options.upper_bound, options.num_partitions):
            return [
                Problem(
                    (*loc, "partition_column"),
                    "needs lower_bound, upper_bound and num_partitions",
                )
            ]
        return []

    def system_reach(
        self, options: JdbcOptions, reach: Reach, loc: tuple[Any, ...]
    ) -> list[Problem]:
        if not reach.confined:
            return []
        return [Problem((*loc, "options", k), why) for k, why in _reach_refusals(options, reach)]

    def object_reach(
        self,
        system: JdbcOptions,
        options: JdbcObjectOptions,
        locator: str,
        read_options: Mapping[str, str],
        reach: Reach,
        loc: tuple[Any, ...],
    ) -> list[Problem]:
        if not reach.confined:
            return []
        return [
            Problem(
                (*loc, "options", key),
                f"JDBC reader option {key!r} is not one a tenant may set (theirs: "
                f"{', '.join(sorted(SAFE_READ_OPTIONS))})",
            )
            for key in read_options
            if key.lower() not in SAFE_READ_OPTIONS
        ]
