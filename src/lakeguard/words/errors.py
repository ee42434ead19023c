"""The one exception root of OpenLakeTx + LakeGuard and its families.

Every error says *what* went wrong, *where* (a structured location such as a YAML path, a table
or a dataset) and *how to fix it*, and is marked terminal (retrying cannot help) or transient
(a retry may succeed). Runners retry only transient errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from enum import IntEnum
from typing import Any, TypedDict


class ExitCode(IntEnum):
    """The documented exit codes of `laketx` (README.md lists them): one per error family."""

    OK = 0
    FAILED = 1  # a failed run, or an unexpected error
    CONFIG = 2  # configuration or a missing prerequisite
    INVALID = 3  # invalid metadata, or a definition out of the tenant's reach
    NOT_REGISTERED = 4
    STORE = 5  # the metadata store
    SOURCE = 6
    DRIFT = 7  # a schema drift the profile blocks
    BLOCKED = 8  # the gate said no
    CONFLICT = 9  # a concurrent write won
    AUDIT = 10  # `verify` found a broken invariant, or `replay` a mismatch
    REFUSED_KEY = 11
    UNAVAILABLE = 12  # storage that does not answer, or a service that is stopping
    TIME_LIMIT = 13


class ErrorJson(TypedDict):
    """An error as `--json` prints it and a run's row keeps it."""

    error: str
    what: str
    where: str | None
    fix: str | None
    transient: bool
    # the raise site's facts (a table, a key, a status): any value `json.dumps(default=str)` takes
    details: Mapping[str, object]


class LakeTxError(Exception):
    """Root of every error the project raises on purpose. Whether a retry may help is the
    class's (`transient`), never the raise site's: a transient failure is its own subclass."""

    transient: bool = False
    exit_code: ExitCode = ExitCode.FAILED

    def __init__(
        self,
        what: str,
        *,
        where: str | None = None,
        fix: str | None = None,
        details: Mapping[str, object] | None = None,
    ) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        self.details: Mapping[str, object] = details or {}
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [self.what]
        if self.where:
            parts.append(f"(at {self.where})")
        text = " ".join(parts)
        if self.fix:
            text += f" — fix: {self.fix}"
        return text

    def __str__(self) -> str:
        return self.message

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> ErrorJson:
        """Structured form, for `--json` output and metadata rows."""
        return {
            "error": self.kind,
            "what": self.what,
            "where": self.where,
            "fix": self.fix,
            "transient": self.transient,
            "details": self.details,
        }


def first_line(exc: BaseException, limit: int = 2000) -> str:
    """One line that names an exception: its message (first line) or its type."""
    text = str(exc).strip()
    return text.splitlines()[0][:limit] if text else type(exc).__name__


def root_cause(exc: BaseException) -> str:
    """The deepest exception behind a JVM error raised through Py4J (a `Py4JJavaError`, by
    its `java_exception`), as `class: message` (first line); else `exc`'s first line."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return first_line(exc)
    try:
        while java.getCause() is not None and java.getCause() != java:
            java = java.getCause()
        return str(java.toString()).splitlines()[0]
    except Exception:  # the JVM gone (a killed driver): the Python side is all there is
        return first_line(exc)


# `name=value` where the name says secret (a JDBC URL's password, a signed URL's token, a
# Hadoop key setting), and a URL's user:password@
_SECRET_PAIR = re.compile(
    r"(?i)([\w.-]*(?:password|passwd|secret|token|access[._-]?key|signature)[\w.-]*\s*=\s*)"
    r"[^\s&;,'\"]+"
)
_URL_PASSWORD = re.compile(r"(\b[a-z][\w+.-]*://[^/\s:@]+:)[^/\s@]+@", re.IGNORECASE)
# secrets the JVM's S3 client may read from the environment
_SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def redact(text: str) -> str:
    """`text` with what looks like a secret masked: `password=...` and its kin, a URL's
    password, and the values of the AWS secret variables of this process."""
    text = _URL_PASSWORD.sub(r"\1****@", _SECRET_PAIR.sub(r"\1****", text))
    for name in _SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 8:  # a short value would mask ordinary words
            text = text.replace(value, "****")
    return text


def describe(exc: BaseException) -> str:
    """How an error is recorded in run rows: a LakeTxError's message; a JVM error (Py4J) by
    its root cause, since its own message names only the Py4J call ("An error occurred while
    calling o162.save."); else type and first line."""
    if isinstance(exc, LakeTxError):
        return exc.message
    if getattr(exc, "java_exception", None) is not None:
        return redact(root_cause(exc))[:2000]
    if not str(exc).strip():
        return type(exc).__name__
    return f"{type(exc).__name__}: {first_line(exc)}"[:2000]


class ConfigError(LakeTxError):
    """Bad settings or a missing prerequisite (Java, Python, a credential)."""

    exit_code = ExitCode.CONFIG


class EngineUnavailable(ConfigError):
    """Spark could not start or be reached for now (its jars being resolved, a Spark Connect
    server down, the class archive's build): a retry may succeed."""

    transient = True


class ValidationError(LakeTxError):
    """A metadata document or definition is invalid; `details['errors']` lists every problem."""

    exit_code = ExitCode.INVALID

    def __init__(self, what: str, *, errors: list[dict[str, str]], **kw: Any) -> None:
        details = {**(kw.pop("details", None) or {}), "errors": errors}
        self.errors = errors
        super().__init__(what, details=details, **kw)

    @property
    def message(self) -> str:
        lines = [super().message]
        lines += [f"  {e['path']}: {e['message']}" for e in self.errors]
        return "\n".join(lines)


class InvalidDefinition(ValidationError):
    """Stored definition rows (edited directly, say) that do not validate: they block only
    the datasets, jobs or schedules they concern. Each entry of `details['errors']` names its
    table and key (`path`), what is wrong and how to fix it."""


class NotRegisteredError(LakeTxError):
    """A dataset, job or source that the registry does not know (invariant 1)."""

    exit_code = ExitCode.NOT_REGISTERED


class MetadataStoreError(LakeTxError):
    """The metadata store refused an operation or found its tables inconsistent."""

    exit_code = ExitCode.STORE


class StoreContended(MetadataStoreError):
    """A metadata table kept changing under a compare-and-set append: too many writers at
    once, a retry later may succeed."""

    transient = True


class AppendOnlyViolation(MetadataStoreError):
    """An attempt to update or delete rows of an append-only runtime table (invariant 3)."""


class SourceError(LakeTxError):
    """A source could not be read: missing file, corrupt content, unreachable system."""

    exit_code = ExitCode.SOURCE


class SourceUnavailable(SourceError):
    """A source that could not be reached or read for now (a host that does not resolve, a
    database or server down, a body cut off, a file that vanished between listing and
    reading): a retry may succeed. Nothing was loaded."""

    transient = True


class SchemaDriftError(LakeTxError):
    """The live schema differs from the approved one in a way the profile blocks."""

    exit_code = ExitCode.DRIFT


class PromotionBlocked(LakeTxError):
    """The gate said no: a FAIL rule or a BLOCK policy stopped the write (not a crash)."""

    exit_code = ExitCode.BLOCKED


class WriteConflict(LakeTxError):
    """A concurrent Delta commit won the race; the write can be retried."""

    transient = True
    exit_code = ExitCode.CONFLICT


class AuditFailed(LakeTxError):
    """`verify` found the store breaking an invariant; `details['violations']` lists each."""

    exit_code = ExitCode.AUDIT


class OutOfReach(LakeTxError):
    """A tenant's definition names a path, a secret or a destination the operator did not
    allow it (`lakeguard.records.reach`), found where it takes effect: a run, a connection, a file
    opened. Terminal: nothing was read, moved or sent."""

    exit_code = ExitCode.INVALID


class UnsafeExpressionError(ValidationError):
    """A SQL expression in metadata is not a plain, side-effect-free predicate."""


class AuthError(LakeTxError):
    """A request without a usable API key (HTTP 401); it never names the key it was sent."""

    exit_code = ExitCode.REFUSED_KEY


class ForbiddenError(LakeTxError):
    """A usable key without the scope the request needs (HTTP 403)."""

    exit_code = ExitCode.REFUSED_KEY


class StorageError(LakeTxError):
    """The warehouse's files could not be listed, read, moved or removed (a disk or an object
    store that refuses or does not answer); a retry may succeed."""

    transient = True
    exit_code = ExitCode.UNAVAILABLE


class TimeLimitExceeded(LakeTxError):
    """A run went past its time limit (`run_time_limit_seconds`): its Spark jobs were
    cancelled and it stopped before publishing anything more. Terminal: the same run would
    take as long again."""

    exit_code = ExitCode.TIME_LIMIT
