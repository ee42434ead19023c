"""One tenant's rows of every definition table a document makes, table by table (pure):
what `to_rows` builds, `plan` compares, `export` writes back and the registry loads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Self

from lakeguard.records.alerts.channel_rows import ChannelRow, RouteRow
from lakeguard.records.checks.rule_rows import PolicyRuleRow, QualityRuleRow, SchemaRuleRow
from lakeguard.records.definitions.datasets import DatasetRow, TargetRow
from lakeguard.records.definitions.jobs import JobParameterRow, JobRow, JobTaskRow
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.sources.rows import SourceColumnRow, SourceObjectRow, SourceSystemRow


@dataclass(frozen=True, kw_only=True)
class DefinitionSet:
    """Rows by table: each field is a table (its name the table's) and its rows."""

    schema_compatibility_rules: tuple[SchemaRuleRow, ...] = ()
    policy_rules: tuple[PolicyRuleRow, ...] = ()
    source_systems: tuple[SourceSystemRow, ...] = ()
    source_objects: tuple[SourceObjectRow, ...] = ()
    source_object_columns: tuple[SourceColumnRow, ...] = ()
    targets: tuple[TargetRow, ...] = ()
    dataset_registry: tuple[DatasetRow, ...] = ()
    quality_rules: tuple[QualityRuleRow, ...] = ()
    jobs: tuple[JobRow, ...] = ()
    job_parameters: tuple[JobParameterRow, ...] = ()
    job_tasks: tuple[JobTaskRow, ...] = ()
    notification_channels: tuple[ChannelRow, ...] = ()
    notification_routes: tuple[RouteRow, ...] = ()

    @classmethod
    def from_stored(cls, tables: Mapping[str, Iterable[Mapping[str, Any]]]) -> Self:
        """Stored rows (as `MetadataStore.rows` reads them) by table, as their classes; a
        table not given has no rows."""
        made: dict[str, tuple[Any, ...]] = {
            name: tuple(DOCUMENT_TABLES[name].from_row(r) for r in rows)
            for name, rows in tables.items()
        }
        return cls(**made)

    @classmethod
    def of(cls, rows: Iterable[DefinitionRow]) -> Self:
        """Rows of any tables, each put under its table (in the order given)."""
        by_table: dict[str, list[DefinitionRow]] = {}
        for row in rows:
            by_table.setdefault(row.TABLE.name, []).append(row)
        made: dict[str, tuple[Any, ...]] = {name: tuple(found) for name, found in by_table.items()}
        return cls(**made)

    def rows(self, table: str) -> tuple[DefinitionRow, ...]:
        """The rows of one table, by its name."""
        found: tuple[DefinitionRow, ...] = getattr(self, table)
        return found

    def tables(self) -> Iterator[tuple[str, tuple[DefinitionRow, ...]]]:
        """(table, rows) of every table, in the order a document lists them."""
        for f in fields(self):
            yield f.name, self.rows(f.name)

    def only(self, tables: Sequence[str]) -> Self:
        """These tables' rows, every other table empty."""
        emptied: dict[str, tuple[Any, ...]] = {n: () for n, _ in self.tables() if n not in tables}
        return replace(self, **emptied)

    def where(self, keep: Mapping[str, Iterable[DefinitionRow]]) -> Self:
        """The same set, the tables in `keep` holding just those rows."""
        kept: dict[str, tuple[Any, ...]] = {n: tuple(rows) for n, rows in keep.items()}
        return replace(self, **kept)


DOCUMENT_TABLES: dict[str, type[DefinitionRow]] = {
    SchemaRuleRow.TABLE.name: SchemaRuleRow,
    PolicyRuleRow.TABLE.name: PolicyRuleRow,
    SourceSystemRow.TABLE.name: SourceSystemRow,
    SourceObjectRow.TABLE.name: SourceObjectRow,
    SourceColumnRow.TABLE.name: SourceColumnRow,
    TargetRow.TABLE.name: TargetRow,
    DatasetRow.TABLE.name: DatasetRow,
    QualityRuleRow.TABLE.name: QualityRuleRow,
    JobRow.TABLE.name: JobRow,
    JobParameterRow.TABLE.name: JobParameterRow,
    JobTaskRow.TABLE.name: JobTaskRow,
    ChannelRow.TABLE.name: ChannelRow,
    RouteRow.TABLE.name: RouteRow,
}
