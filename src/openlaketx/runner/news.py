"""Whether a run would find anything new, decided from metadata and listings, without Spark.

A bronze dataset is up to date when the engine of each of its sources' kinds says so without a
JVM (files: a listing of the local disk or the object store; Delta: delta-rs; http: a
conditional request); a derived one when its parents have no approved version it has not
consumed. A dataset with a published but unrecorded commit (a crash to recover), or a source
that only Spark can answer for (JDBC, HDFS), may have something: the run starts Spark as usual.
"""

from __future__ import annotations

from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.records.commits import app_id, published_through
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.words.vocabulary import Layer
from openlaketx.sources.kinds import engine
from openlaketx.tables import dataset_location


def nothing_new(
    reader: StoreReader, registry: Registry, datasets: list[str], warehouse: str
) -> dict[str, str] | None:
    """For each dataset, why it has nothing new; None when any of them may have something."""
    notes = {}
    for dataset_id in datasets:
        if registry.refusal(dataset_id) is not None:
            return None  # its definitions do not validate: the run says so, as an error
        note = _up_to_date(reader, registry, registry.dataset(dataset_id), warehouse)
        if note is None:
            return None
        notes[dataset_id] = note
    return notes


def _up_to_date(
    reader: StoreReader, registry: Registry, dataset: DatasetDef, warehouse: str
) -> str | None:
    own = reader.versions.approved(dataset.dataset_id)
    path = dataset_location(warehouse, dataset.table_name)
    if published_through(path, app_id(reader.tenant, dataset.dataset_id)) > (
        own.version if own else 0
    ):
        return None  # a crashed run's commit waits to be recorded
    if dataset.layer == Layer.BRONZE:
        return _sources_up_to_date(reader, registry, dataset)
    consumed = own.upstream_refs if own else {}
    waiting = []
    for parent in dataset.parents:
        latest = reader.versions.approved(parent)
        if latest is None:
            waiting.append(parent)
        elif latest.version > consumed.get(parent, 0):
            return None
    # the same words as a run that looked (runner/inputs.py, runner/models.py)
    if dataset.transform.sql is None:
        return f"no new approved version of {dataset.parents[0]}"
    if waiting:
        return f"no approved version of {', '.join(waiting)} yet"
    return "no new approved version of the parents"


def _sources_up_to_date(reader: StoreReader, registry: Registry, dataset: DatasetDef) -> str | None:
    objects = registry.source_objects(dataset.dataset_id)
    if not objects:
        return "no active source object lands here"
    progress = reader.versions.source_progress(dataset.dataset_id)
    notes = []
    for obj in objects:
        system = registry.system(obj.source_system_id)
        if not system.enabled:
            return None  # the run says so, as an error
        note = engine(system.kind).nothing_new(system, obj, progress, reader.tenant_reach())
        if note is None:
            return None  # something may be new, or only a read can tell
        notes.append(note)
    return "; ".join(notes) or "nothing new in the sources"
