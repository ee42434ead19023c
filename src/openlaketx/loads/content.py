"""Order-independent content hashes of a dataset version: "rows:sum of row hashes".

A version's content is the rows it wrote: those carrying its `_laketx_version` in the table as
of its commit (for a full load, the whole table). Each row is hashed with xxhash64 over its data
columns in name order; the engine's bookkeeping (`_laketx_*`: run id, load time, row hash,
soft-delete time) is left out, so a rebuild of the same rows gives the same text whatever its
files, order or run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lakeguard.store.ddl import quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

VERSION_COLUMN = "_laketx_version"
# Columns that are not part of a row's content (unparseable-line text is never published).
_CORRUPT = "_corrupt_record"


def hashed_columns(columns: Iterable[str]) -> list[str]:
    """The data columns a content hash covers, in the order it hashes them."""
    return sorted(c for c in columns if not c.startswith("_laketx") and c != _CORRUPT)


def frame_hash(frame: DataFrame, columns: Iterable[str] | None = None) -> str:
    """The content hash of `frame`'s rows (over `columns`, default: its data columns)."""
    from pyspark.sql import functions as F

    names = hashed_columns(frame.columns if columns is None else columns)
    row = (
        frame.select(F.xxhash64(*_null_masks(names), *[F.col(quote(c)) for c in names]).alias("h"))
        .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col("h").cast("decimal(38,0)")).alias("s"))
        .first()
    )
    assert row is not None
    return f"{row['n']}:{row['s'] or 0}"


def _null_masks(names: list[str]) -> list[Column]:
    """Which columns are null, as bit masks of 62 columns each: xxhash64 skips nulls, so
    without them (1, NULL) and (NULL, 1) would hash alike. Integer arithmetic, unlike an
    array of flags, allocates nothing per row."""
    from pyspark.sql import functions as F

    masks = []
    for start in range(0, len(names), 62):
        bits = [
            F.when(F.col(quote(c)).isNull(), F.lit(1 << i)).otherwise(F.lit(0))
            for i, c in enumerate(names[start : start + 62])
        ]
        mask = bits[0]
        for bit in bits[1:]:
            mask = mask + bit
        masks.append(mask.cast("long"))
    return masks or [F.lit(0)]


def frame_hash_of_nothing() -> str:
    """The content hash of no rows."""
    return "0:0"


def version_rows(
    spark: SparkSession, path: str, version: int, commit_version: int | None = None
) -> DataFrame:
    """The rows data version `version` wrote, in the table as of `commit_version` (default:
    its latest state). Delta skips every file whose statistics exclude the version."""
    from pyspark.sql import functions as F

    reader = spark.read.format("delta")
    if commit_version is not None:
        reader = reader.option("versionAsOf", commit_version)
    return reader.load(path).where(F.col(VERSION_COLUMN) == F.lit(version).cast("long"))


def version_hash(
    spark: SparkSession, path: str, version: int, commit_version: int | None = None
) -> str:
    """The content hash of what data version `version` wrote (see `version_rows`)."""
    return frame_hash(version_rows(spark, path, version, commit_version))
