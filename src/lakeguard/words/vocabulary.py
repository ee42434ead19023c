"""The words of the metadata model, declared once (pure).

Values are the seeds' own words, so rows written with them read the same in SQL. Each is a
`StrEnum`: members compare equal to their text, which is what the Delta tables store, and
`vocab` reads a stored text back as its member.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, TypeVar

from lakeguard.words.errors import ValidationError


class Layer(StrEnum):
    BRONZE = "bronze"
    SILVER = "silver"
    GOLD = "gold"

    @property
    def rank(self) -> int:
        return list(Layer).index(self)


class LoadType(StrEnum):
    """How an approved batch is published to its dataset table."""

    APPEND = "append"
    MERGE = "merge"
    FULL = "full"
    SCD2 = "scd2"


# Columns an scd2 dataset adds to each version of a row, and the soft-delete marker.
SCD2_COLUMNS = ("valid_from", "valid_to", "is_current")
DELETED_AT = "_laketx_deleted_at"
# A derived batch spanning several parent versions tags each row with its parent version (staged
# only, never published); rules that count per batch (UNIQUE, ROW_COUNT, AGGREGATE) count per
# parent version, as one-by-one runs would have.
PARENT_VERSION = "_laketx_parent_version"
# The text of an unparseable source line (csv/json); staged, never published.
CORRUPT_RECORD = "_corrupt_record"
# One staged column per row-level rule of the run (`_laketx_rule_0`, ...): a sample of the
# failing row where it breaks the rule, null where it passes, so each file's Parquet footer
# counts the rule's failures (its null count) and holds two samples (its min and max).
# Staged only: the files may keep it, the table schema never lists it.
RULE_FLAG_PREFIX = "_laketx_rule_"
# Columns the engine keeps for itself on every row: lineage, digests, hashes, markers.
ENGINE_PREFIX = "_laketx"


def rule_flag(index: int) -> str:
    """The staged column of the run's `index`-th row-level rule."""
    return f"{RULE_FLAG_PREFIX}{index}"


def is_staged_only(name: str) -> bool:
    """A column staged files carry for the gate, never part of a table's schema."""
    return name == PARENT_VERSION or name.startswith(RULE_FLAG_PREFIX)


def is_bookkeeping(name: str) -> bool:
    """The engine's own columns (and unparseable text): never a row's content."""
    return name.startswith(ENGINE_PREFIX) or name == CORRUPT_RECORD


def is_data_column(name: str) -> bool:
    """A column the data itself has: neither bookkeeping nor scd2 validity."""
    return not is_bookkeeping(name) and name not in SCD2_COLUMNS


class DeleteMissing(StrEnum):
    """What a full snapshot's missing keys do to a merge or scd2 dataset."""

    NONE = "none"  # kept
    SOFT = "soft"  # marked deleted (scd2: the current version closed)
    HARD = "hard"  # deleted (scd2: every version)


class FailBehavior(StrEnum):
    """What a breached FAIL rule does to a batch."""

    QUARANTINE = "quarantine"  # the batch is blocked and kept in quarantine
    DROP = "drop"  # the failing rows go to quarantine, the rest is promoted
    ABORT = "abort"  # blocked, and the whole job stops


class Enforcement(StrEnum):
    """What a failed policy does."""

    BLOCK = "BLOCK"
    ALERT = "ALERT"


class SourceLoad(StrEnum):
    """How a source object is read: only what is new, a whole snapshot, or above a watermark."""

    APPEND = "append"  # files: each new file once
    FULL = "full"  # the whole source, as a snapshot, whenever it changed
    INCREMENTAL = "incremental"  # rows above the last watermark, or a table's new versions


class SourceKindName(StrEnum):
    """The kinds of source system (`lakeguard.records.sources.kinds` declares each, one module
    apiece)."""

    FILE = "file"
    JDBC = "jdbc"
    DELTA = "delta"
    HTTP = "http"


class Severity(StrEnum):
    WARN = "WARN"
    FAIL = "FAIL"


class RuleType(StrEnum):
    NOT_NULL = "NOT_NULL"
    RANGE = "RANGE"
    UNIQUE = "UNIQUE"
    REGEX = "REGEX"
    ALLOWED_VALUES = "ALLOWED_VALUES"
    EXPRESSION = "EXPRESSION"
    ROW_COUNT = "ROW_COUNT"
    FOREIGN_KEY = "FOREIGN_KEY"
    FRESHNESS = "FRESHNESS"
    AGGREGATE = "AGGREGATE"
    NOT_EMPTY_STRING = "NOT_EMPTY_STRING"
    # Built in, never declared: unparseable source lines against the malformed-row budget.
    PARSE = "PARSE"


DECLARABLE_RULE_TYPES = tuple(t.value for t in RuleType if t is not RuleType.PARSE)


class Outcome(StrEnum):
    """One rule on one batch: PASS, WARN (logged only) or FAIL (blocks the promotion)."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"


class DqStatus(StrEnum):
    """A batch's validation summary in `dq_results` (seed 003's words)."""

    PASS = "PASS"
    WARNING = "WARNING"
    FAIL = "FAIL"


class AttemptStatus(StrEnum):
    """Terminal status of one dataset attempt (`run_history`, seed 002)."""

    SUCCESS = "SUCCESS"
    BLOCKED = "BLOCKED"
    FAILED = "FAILED"


class JobStatus(StrEnum):
    """Terminal status of one job run (`pipeline_runs`, seed 003)."""

    COMPLETED = "COMPLETED"
    BLOCKED = "BLOCKED"
    FAILED = "FAILED"


class EventStatus(StrEnum):
    """Statuses in `run_events`: PENDING once accepted, RUNNING while in flight, then the
    run's terminal status."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    COMPLETED = "COMPLETED"
    BLOCKED = "BLOCKED"
    FAILED = "FAILED"


IN_FLIGHT = frozenset({EventStatus.PENDING, EventStatus.RUNNING})


class TriggerType(StrEnum):
    """How a run started (seed 003's words, and the service's own triggers)."""

    MANUAL = "manual"  # a person at the CLI or in Python
    API = "api"  # POST /api/v1/jobs/{job}/runs
    SCHEDULER = "scheduler"  # the job's cron schedule
    WEBHOOK = "webhook"  # POST /api/v1/hooks/{job}, HMAC-signed
    RETRY = "retry"  # a transient failure, tried again
    FILE_ARRIVAL = "file_arrival"  # a new file in one of the job's file sources
    UPSTREAM = "upstream"  # a parent dataset got a new approved version from another job
    UNKNOWN = "unknown"  # recorded before triggers were kept with every event


class StepStatus(StrEnum):
    COMPLETED = "COMPLETED"
    BLOCKED = "BLOCKED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


class LeaseAction(StrEnum):
    """Events of `dataset_leases`: who holds a dataset, folded from an append-only log."""

    ACQUIRE = "ACQUIRE"
    RENEW = "RENEW"
    RELEASE = "RELEASE"


class FileAction(StrEnum):
    """Events of `rejected_files`: a file put aside as unreadable, and its release."""

    REJECTED = "REJECTED"  # put aside: not read again until it changes or is released
    RELEASED = "RELEASED"  # an operator released it: the next run reads it again


class SyncOutcome(StrEnum):
    """What a watcher did with one version of one document (`metadata_syncs`)."""

    APPLYING = "APPLYING"  # claimed; the watcher is applying it
    APPLIED = "APPLIED"
    UNCHANGED = "UNCHANGED"  # valid, and the store already said all of it
    REFUSED = "REFUSED"  # invalid: nothing of it was applied
    FAILED = "FAILED"  # the apply failed (a write conflict, the disk): tried again next pass
    DEACTIVATED = "DEACTIVATED"  # removed from the folder, its definitions deactivated

    @property
    def settled(self) -> bool:
        """Whether this file version needs nothing more."""
        return self not in (SyncOutcome.APPLYING, SyncOutcome.FAILED)


class ChannelKindName(StrEnum):
    """The kinds of notification channel (`lakeguard.records.alerts.channels` declares each)."""

    WEBHOOK = "webhook"
    SLACK = "slack"
    EMAIL = "email"


class AlertEvent(StrEnum):
    """What the control plane tells people about (docs/alerts.md): the causes of an incident,
    and RECOVERED, which resolves a dataset's open incidents."""

    BLOCKED = "BLOCKED"  # a promotion the gate blocked (a FAIL rule, a BLOCK policy or drift)
    FAILED = "FAILED"  # a run that failed, and will not be retried
    ALERT = "ALERT"  # an ALERT policy, or a schema change its profile says ALERT
    WARN = "WARN"  # a WARN rule whose failing share reached a route's `warn_share`
    STUCK = "STUCK"  # blocked again and again on the same input (lakeguard.records.stuck)
    SLA_MISSED = "SLA_MISSED"  # no approved version within its freshness SLA
    RECOVERED = "RECOVERED"  # promoted again: its open incidents are resolved


class AlertSeverity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return list(AlertSeverity).index(self)


class IncidentAction(StrEnum):
    """Rows of `incident_events`: an incident is folded from them."""

    OPENED = "OPENED"  # the first event of a (subject, cause) with no open incident
    REPEATED = "REPEATED"  # the same cause again while the incident is open
    RESOLVED = "RESOLVED"  # the subject recovered: the incident is closed


class DeliveryAction(StrEnum):
    """Rows of `notification_deliveries`: one delivery (an event to a channel), folded."""

    CLAIMED = "CLAIMED"  # a dispatcher took it (compare-and-set), until `expires_at`
    SENT = "SENT"  # the receiver accepted it (2xx, or the mail server took it)
    FAILED = "FAILED"  # this attempt failed; tried again after `next_attempt_at`
    GAVE_UP = "GAVE_UP"  # every attempt failed, or the channel cannot be used
    SUPPRESSED = "SUPPRESSED"  # a repeat inside the route's repeat interval: not sent

    @property
    def settled(self) -> bool:
        return self in (DeliveryAction.SENT, DeliveryAction.GAVE_UP, DeliveryAction.SUPPRESSED)


E = TypeVar("E", bound=StrEnum)


def vocab(kind: type[E], value: Any, where: str) -> E:
    """A stored word read as its vocabulary's member; a word outside it (a row edited by
    hand, say) is a ValidationError naming where it is and the words allowed."""
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        message = f"{value!r} is not one of {allowed}"
        raise ValidationError(
            f"{where} is {message}",
            where=where,
            errors=[{"path": where, "message": message}],
            fix=f"set it to one of {allowed} (or re-apply the definition's document)",
        ) from None
