"""The engine's half of a source kind: everything the runner and the scheduler ask of it.

A kind's LakeGuard half (`lakeguard.records.sources.kinds`) declares its options, credential,
progress marks and checks; this half reads it. Each kind is one `SourceEngine` subclass in the
kind's module of this package, registered once in `openlaketx.sources.kinds`. Nothing outside a kind
compares kind names: the runner reads, the no-JVM "anything new?" and the scheduler's arrival
trigger ask the kind's engine, and a failure Spark raised while reading is classified by it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from lakeguard.records.reach import Reach
from lakeguard.records.sources.progress import Rejection, SourceProgress
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.errors import SourceError
from lakeguard.words.vocabulary import SourceKindName
from openlaketx.sources.reads import SourceRead

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class ReadContext:
    """What a read may use besides its source: a folder of its own for what it fetches, and
    what the tenant may reach (every path it opens and host it connects to is checked)."""

    run_id: str
    # a local folder no reader of the table sees, deleted once the batch is staged (and swept
    # by the next run after a crash); a kind that fetches over the network lands files here
    landing: str
    reach: Reach


class SourceEngine(ABC):
    """Reads one kind of source; `kind` names its LakeGuard half."""

    kind: ClassVar[SourceKindName]

    @abstractmethod
    def read(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        context: ReadContext,
    ) -> SourceRead:
        """What is new in one source object, given what approved batches took."""

    def nothing_new(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> str | None:
        """Why a run would find nothing new in `obj`, found without a JVM; None when it may
        find something, when only a read can tell, or when `obj` names what the tenant may
        not reach (the run says so)."""
        return None

    def arrivals(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> list[str] | None:
        """What the scheduler's arrival trigger sees waiting: one identity per input a run
        would take (a file's path, size and time), found without a JVM. None: this kind, or
        this object, has no arrival trigger (schedule it instead), or it names what the tenant
        may not reach."""
        return None

    def recovered(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        taken: list[SourceProgressRow],
        reach: Reach,
    ) -> None:
        """Finish what a crashed attempt left undone after its version was published (its
        version is recorded now, by the recovering run): `taken` is what that attempt read
        from `obj`. Nothing by default."""
        return None

    def unreadable(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        read: SourceRead,
        message: str,
    ) -> list[Rejection]:
        """The files of `read` that Spark failed on while the batch was staged (`message`: the
        failure's whole text), to be put aside and the batch read again without them; none
        when the failure is not a file's, or when `obj` does not put bad files aside (the
        failure stays as it is). None by default: no file of this kind is put aside."""
        return []

    def classify(
        self, message: str, system: SourceSystemDef, obj: SourceObjectDef
    ) -> SourceError | None:
        """A failure Spark raised while reading the source (its root cause, secrets already
        masked), as a SourceError that says whether a retry can help; None: not this kind's
        to say (the failure stays as it is, terminal)."""
        return None
