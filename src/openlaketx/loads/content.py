"""Order-independent content hashes of a dataset version: "rows:sum of row digests".

A version's content is the rows it wrote: those carrying its `_laketx_version` in the table as
of its commit (for a full load, the whole table). A row's digest is xxhash64 over which of its
data columns are null and their values, in name order; the engine's bookkeeping (`_laketx_*`:
run id, load time, row hash, soft-delete time) is left out, so a rebuild of the same rows gives
the same text whatever its files, order or run.

The digest is computed in the staging pass (`_laketx_row_digest`, a lineage column), so the
hash of what a commit adds is a sum over one column of the staged files' Parquet, read with
pyarrow (no Spark job). Replay recomputes every digest from the data (`frame_hash`), so a row
altered behind the gate cannot hide behind its stored digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import QueryBuilder

from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import CORRUPT_RECORD, is_bookkeeping
from openlaketx import storage

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

VERSION_COLUMN = "_laketx_version"
DIGEST_COLUMN = "_laketx_row_digest"
# Columns that are not part of a row's content (unparseable-line text is never published).
CORRUPT = CORRUPT_RECORD
NOTHING = "0:0"  # the content hash of no rows


def content_columns(columns: Iterable[str]) -> list[str]:
    """The columns a content hash covers (all but the engine's bookkeeping; scd2 validity is
    content), in the order it hashes them."""
    return sorted({c for c in columns if not is_bookkeeping(c)})


def row_digest(present: Iterable[str], absent: Iterable[str] = ()) -> Column:
    """A row's digest over its data columns `present` and, as nulls, `absent` ones (columns
    the table holds and the batch lacks: the table will show them null)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return F.expr(row_digest_sql(present, absent))


def row_digest_sql(present: Iterable[str], absent: Iterable[str] = ()) -> str:
    """`row_digest` as one SQL expression (pure). One expression is one round trip to the
    JVM, where building it from Column objects took one per column, null test and mask term:
    hundreds for a wide table, a fixed cost of every staged batch."""
    have = set(content_columns(present))
    names = content_columns([*have, *absent])
    values = [quote(c) for c in names if c in have]  # xxhash64 skips nulls anyway
    return f"xxhash64({', '.join([*_null_masks(names, have), *values])})"


def _null_masks(names: list[str], present: set[str]) -> list[str]:
    """Which columns are null, as bit masks of 62 columns each: xxhash64 skips nulls, so
    without them (1, NULL) and (NULL, 1) would hash alike. Integer arithmetic, unlike an
    array of flags, allocates nothing per row. (A bigint sum of int terms, the types the
    digests stored so far were computed with: the same types give the same hash.)"""
    masks = []
    for start in range(0, len(names), 62):
        terms = ["CAST(0 AS BIGINT)"]
        for i, c in enumerate(names[start : start + 62]):
            null = f"{quote(c)} IS NULL" if c in present else "true"
            terms.append(f"CASE WHEN {null} THEN {1 << i} ELSE 0 END")
        masks.append(f"({' + '.join(terms)})")
    return masks or ["0"]


def frame_hash(frame: DataFrame) -> str:
    """The content hash of `frame`'s rows, each digest computed from its data."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return _summed(frame.select(row_digest(frame.columns).alias("d")), F.col("d"))


def version_rows(
    spark: SparkSession, path: str, version: int, commit_version: int | None = None
) -> DataFrame:
    """The rows data version `version` wrote, in the table as of `commit_version` (default:
    its latest state). Delta skips every file whose statistics exclude the version."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    reader = spark.read.format("delta")
    if commit_version is not None:
        reader = reader.option("versionAsOf", commit_version)
    return reader.load(path).where(F.col(VERSION_COLUMN) == F.lit(version).cast("long"))


def version_hash(
    spark: SparkSession, path: str, version: int, commit_version: int | None = None
) -> str:
    """The content hash of what data version `version` wrote, recomputed from the data."""
    return frame_hash(version_rows(spark, path, version, commit_version))


def recorded_digests_hash(spark: SparkSession, path: str, version: int, commit: int) -> str:
    """The content hash of what version `version` wrote, from the digests its rows carry (two
    columns read by delta-rs, the files pruned by the version column's statistics: no Spark
    job); recomputed from the data by Spark if any of them lacks one."""
    table = storage.delta_table(path, commit)
    names = {f.name for f in table.schema().fields}
    if DIGEST_COLUMN in names and VERSION_COLUMN in names:
        sql = (
            f'SELECT count(*) AS n, count("{DIGEST_COLUMN}") AS digests, '
            f'sum(CAST("{DIGEST_COLUMN}" AS DECIMAL(38, 0))) AS s '
            f'FROM t WHERE "{VERSION_COLUMN}" = {int(version)}'
        )
        found = pa.table(QueryBuilder().register("t", table).execute(sql).read_all()).to_pylist()[0]
        if found["digests"] == found["n"]:
            return f"{found['n']}:{found['s'] or 0}"
    return frame_hash(version_rows(spark, path, version, commit))


def _summed(digests: DataFrame, digest: Column) -> str:
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    row = digests.agg(
        F.count(F.lit(1)).alias("n"), F.sum(digest.cast("decimal(38,0)")).alias("s")
    ).first()
    assert row is not None
    return f"{row['n']}:{row['s'] or 0}"


def staged_hash(paths: Iterable[str]) -> str | None:
    """The content hash of staged Parquet files' parseable rows, from their digest column
    (None: a file has no digest column, or a row no digest)."""
    rows = 0
    high = low = 0
    for path in paths:
        names = set(storage.parquet_columns(path))
        if DIGEST_COLUMN not in names:
            return None
        table = storage.read_parquet(path, [c for c in (DIGEST_COLUMN, CORRUPT) if c in names])
        digests = table.column(DIGEST_COLUMN)
        if CORRUPT in names:  # unparseable rows are never promoted
            digests = digests.filter(pc.is_null(table.column(CORRUPT)))
        if digests.null_count:
            return None
        rows += len(digests)
        # an exact sum of int64s: their high and low 32-bit halves summed apart
        high += pc.sum(pc.shift_right(digests, 32)).as_py() or 0
        low += pc.sum(pc.bit_wise_and(digests, 0xFFFFFFFF)).as_py() or 0
    return f"{rows}:{high * (1 << 32) + low}" if rows else NOTHING
