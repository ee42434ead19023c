"""What a dataset's YAML says of it, for its page: names, owner, domain, description, tags,
the jobs that run it, and its approved columns with their declared descriptions (delta-rs
only, no Spark)."""

from __future__ import annotations

from dataclasses import dataclass

from lakeguard.records.sources.rows import SourceColumnRow
from openlaketx.lakehouse import Lakehouse


@dataclass(frozen=True)
class ColumnAbout:
    """A column of a dataset's latest approved version, with what its definitions say."""

    name: str
    type: str
    nullable: bool
    description: str | None = None  # a source column's, for a dataset its sources land in
    pii: bool = False


@dataclass(frozen=True)
class DatasetAbout:
    """What the YAML says of a dataset, for its page: names, owner, domain, description, tags,
    the jobs that run it, and its columns."""

    name: str | None
    owner: str | None
    domain: str | None
    description: str | None
    tags: tuple[str, ...]
    jobs: tuple[str, ...]
    columns: tuple[ColumnAbout, ...] | None  # None: no approved schema captured yet


def dataset_about(lh: Lakehouse, dataset_id: str) -> DatasetAbout:
    """The dataset's catalog facts (the registry, the source columns and its approved
    schema)."""
    registry = lh.reader.definitions.registry()
    # the registry holds every active dataset that validates; the store has the others
    ds = registry.datasets.get(dataset_id) or lh.dataset(dataset_id)
    sources = {o.source_object_id for o in registry.objects if o.dataset_id == dataset_id}
    described = {
        c.column_name: c
        for c in lh.store.definitions(SourceColumnRow)
        if c.source_object_id in sources
    }
    schema = lh.reader.versions.approved_schema(dataset_id)
    columns = None
    if schema is not None:
        columns = tuple(
            ColumnAbout(
                c.name,
                c.type,
                c.nullable,
                described[c.name].description if c.name in described else None,
                described[c.name].is_pii if c.name in described else False,
            )
            for c in schema
        )
    jobs = tuple(
        sorted(
            j.job_id
            for j in registry.jobs.values()
            if any(t.dataset_id == dataset_id for t in j.tasks)
        )
    )
    return DatasetAbout(
        ds.dataset_name if ds.dataset_name != dataset_id else None,
        ds.owner,
        ds.domain,
        ds.description,
        tuple(ds.tags),
        jobs,
        columns,
    )
