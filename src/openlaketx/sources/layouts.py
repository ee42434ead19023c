"""How a file source's files are read (Spark): the declared schema, the layouts the files
really have (a CSV header, a Parquet footer, a JSON file's first fields), and a read of one
layout with unparseable rows kept in `_corrupt_record`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import CORRUPT_RECORD
from openlaketx import storage
from openlaketx.sources import json_records
from openlaketx.sources.listing import plain_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CORRUPT_COLUMN = CORRUPT_RECORD  # where Spark keeps an unparseable line


def declared_columns(obj: SourceObjectDef) -> list[SchemaColumn]:
    """The approved schema of a source object, in declared order."""
    return [
        SchemaColumn(c.column_name, c.data_type.lower(), c.nullable)
        for c in sorted(obj.columns, key=lambda c: c.ordinal)
    ]


def _header(path: str, options: dict[str, str]) -> list[str]:
    """The column names of a CSV file's first line."""
    separator = options.get("sep", options.get("delimiter", ","))
    line = storage.header_line(plain_location(path), options.get("encoding", "utf-8"))
    return [name.strip().strip('"') for name in line.rstrip("\r\n").split(separator)]


def live_layouts(
    spark: SparkSession, obj: SourceObjectDef, paths: list[str]
) -> list[tuple[list[SchemaColumn], list[str]]]:
    """The files grouped by the schema they really have: a CSV file's header (names matched to
    the declared types, new columns as strings), a Parquet file's footer, the fields of a
    JSON file's first lines (the declared columns, then new fields as strings). Every group
    is read by its own layout, so no column is read by the position of another."""
    if obj.format == "json":
        sampled = json_records.sampled_fields(paths, obj.read_options)
        return [(json_records.live_columns(obj, sampled), paths)]
    approved = declared_columns(obj)
    by_name = {c.name.lower(): c for c in approved}
    header = obj.format == "csv" and obj.read_options.get("header", "false").lower() == "true"
    if obj.format == "parquet":
        fields = spark.read.parquet(*paths).schema.fields
        live = [
            SchemaColumn(
                f.name,
                f.dataType.simpleString(),
                by_name[f.name.lower()].nullable if f.name.lower() in by_name else True,
            )
            for f in fields
        ]
        return [(live, paths)]
    if not header:
        return [(approved, paths)]
    groups: dict[tuple[str, ...], list[str]] = {}
    for path in paths:
        groups.setdefault(tuple(_header(path, obj.read_options)), []).append(path)
    layouts = []
    for names, members in groups.items():
        columns = [
            by_name.get(n.lower(), SchemaColumn(n, "string", True))
            if n.lower() not in by_name
            else SchemaColumn(n, by_name[n.lower()].type, by_name[n.lower()].nullable)
            for n in names
        ]
        layouts.append((columns, members))
    return layouts


def read_layout(
    spark: SparkSession,
    obj: SourceObjectDef,
    paths: list[str],
    columns: list[SchemaColumn],
    text_format: bool,
) -> DataFrame:
    """Files of one layout, read with its columns; rows that do not parse keep their text in
    `_corrupt_record` (JSON: see `json_records`, each scalar cast on its own)."""
    if obj.format == "json":
        return json_records.read(spark, obj, paths, columns)
    reader = spark.read.format(obj.format).options(**obj.read_options)
    if text_format:
        reader = reader.option("mode", "PERMISSIVE").option(
            "columnNameOfCorruptRecord", CORRUPT_COLUMN
        )
    parts = [f"{quote(c.name)} {c.type.upper()}" for c in columns]
    if text_format:
        parts.append(f"{quote(CORRUPT_COLUMN)} STRING")
    return reader.schema(", ".join(parts)).load(paths)
