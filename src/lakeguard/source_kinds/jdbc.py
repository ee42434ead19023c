"""A database over JDBC: the table as a snapshot, or its rows above a watermark.

Progress: the highest watermark a batch read (the generic watermark mark). The password is
the system's `credential_ref`; the system's other options are JDBC connection properties.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from lakeguard.catalog.problems import Problem
from lakeguard.schema.types import is_numeric
from lakeguard.source_kinds.base import ObjectFacts, ObjectOptions, SourceKind, SystemOptions
from lakeguard.vocabulary import SourceKindName, SourceLoad

_SECRET_KEYS = ("password", "pwd", "secret", "token")


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
