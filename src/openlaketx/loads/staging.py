"""The one pass over the data: a batch is written once, to a staged folder no reader sees.

Spark writes the batch as Parquet into a folder inside the target table's directory (not
referenced by its Delta log, so invisible to every reader); every row carries the rules it
breaks, computed in that same pass, and the files' footers say which files hold any broken
rule at all. A blocked batch's folder becomes its quarantine as it is.
Only an allowed batch that has unparseable rows is split afterwards (a read of the staged
Parquet, never of the source), so the common batch is written exactly once.

Folders are named after the data version they were staged for, which tells a later run which
ones a crash left behind: a staged batch above the version the table has published was never
published and can go; a scratch batch (the input of a Spark MERGE) is never part of the table.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lakeguard.records.schema.delta_json import DeltaSchema, parse_schema
from lakeguard.words.hashing import digest
from openlaketx import storage
from openlaketx.loads.footers import FileFooter, read_footer

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

STAGED_DIR = "laketx_staged"  # batches whose files may become table files in place
SCRATCH_DIR = "laketx_scratch"  # batches a MERGE reads and rewrites; never table files
LANDING_DIR = "laketx_landing"  # what a source fetched for a run (http): gone once staged
MALFORMED_PART = "laketx_malformed"
_FOLDER = re.compile(r"^v(\d+)-")


@dataclass(frozen=True)
class StagedBatch:
    """A batch written once: its files (by part) and its Spark schema."""

    folder: str
    good: list[FileFooter]
    malformed: list[FileFooter]
    schema: DeltaSchema  # of the staged rows
    split: bool = False  # malformed rows have their own part folder

    @property
    def rows(self) -> int:
        return sum(f.num_records for f in [*self.good, *self.malformed])

    @property
    def good_rows(self) -> int:
        return sum(f.num_records for f in self.good)

    def part_folder(self, malformed: bool = False) -> str:
        """The folder of the good (or malformed) rows."""
        if not self.split:
            return self.folder
        return f"{self.folder}/{MALFORMED_PART}={str(malformed).lower()}"


def staged_rows(spark: SparkSession, batch: StagedBatch, malformed: bool = False) -> DataFrame:
    """The good (or malformed) rows of a staged batch, read with the schema it was staged with
    (a Parquet read left to infer it runs a Spark job over the footers first)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql.types import StructType

    return spark.read.schema(StructType.fromJson(dict(batch.schema))).parquet(
        batch.part_folder(malformed)
    )


def batch_folder(table_path: str, *, scratch: bool, version: int, run_id: str) -> str:
    kind = SCRATCH_DIR if scratch else STAGED_DIR
    return f"{table_path.rstrip('/')}/{kind}/v{version:09d}-{run_id}"


def _footers(folder: str) -> tuple[list[FileFooter], list[FileFooter]]:
    """(good, malformed) footers of the data files under `folder`."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        footers = list(pool.map(read_footer, storage.list_files(folder)))
    bad = f"{MALFORMED_PART}=true"
    return (
        [f for f in footers if bad not in f.path.split("/")],
        [f for f in footers if bad in f.path.split("/")],
    )


def stage(frame: DataFrame, folder: str) -> StagedBatch:
    """Write `frame` once into `folder` and read back its files' footers."""
    frame.write.format("parquet").mode("error").save(folder)
    good, _ = _footers(folder)
    return StagedBatch(
        folder=folder, good=good, malformed=[], schema=parse_schema(frame.schema.jsonValue())
    )


def split(spark: SparkSession, batch: StagedBatch, malformed: Column) -> StagedBatch:
    """The batch with the rows where `malformed` holds in their own part (a new folder).

    Reads the staged Parquet (not the source) and replaces the unsplit folder.
    """
    folder = f"{batch.folder}-split"
    (
        staged_rows(spark, batch)
        .withColumn(MALFORMED_PART, malformed)
        .write.format("parquet")
        .mode("error")
        .partitionBy(MALFORMED_PART)
        .save(folder)
    )
    discard(batch)
    good, bad = _footers(folder)
    return StagedBatch(
        folder=folder,
        good=good,
        malformed=bad,
        schema=batch.schema,
        split=True,
    )


def _landing_root(table_path: str) -> str:
    """Inside the table's folder (its Delta log never names it, so no reader sees it); for a
    table on an object store, a local folder named after the table, since a source writes
    what it fetches with plain file writes."""
    if not storage.is_remote(table_path):
        return storage.join(table_path, LANDING_DIR)
    local = Path(tempfile.gettempdir()) / LANDING_DIR / digest(table_path, 16)
    return str(local)


def landing_folder(table_path: str, run_id: str) -> str:
    """Where a run's sources may land what they fetch (always a local folder)."""
    return storage.join(_landing_root(table_path), run_id)


def drop_landing(table_path: str, run_id: str) -> None:
    """Remove what a run's sources landed (and the landing folder once it is empty)."""
    storage.remove_tree(landing_folder(table_path, run_id))
    with contextlib.suppress(OSError):  # another run's landing is still there: keep it
        Path(_landing_root(table_path)).rmdir()


def sweep(table_path: str, published_through: int) -> list[str]:
    """Delete batches a crash left behind; returns the folders removed.

    Call it only while holding the dataset's lease: no other run is staging then. A staged
    batch for a version above `published_through` was never published; scratch batches and
    landed fetches never are. Published staged batches stay: their files belong to the table
    (VACUUM's business).
    """
    landed = _landing_root(table_path)
    removed = [storage.join(landed, name) for name in storage.subfolders(landed)]
    storage.remove_tree(landed)
    for kind in (STAGED_DIR, SCRATCH_DIR):
        parent = storage.join(table_path, kind)
        for name in storage.subfolders(parent):
            match = _FOLDER.match(name)
            if match is None:
                continue
            if kind == SCRATCH_DIR or int(match.group(1)) > published_through:
                storage.remove_tree(storage.join(parent, name))
                removed.append(storage.join(parent, name))
    return removed


def discard(batch: StagedBatch) -> None:
    """Remove a batch's folder once nothing references it (a merged scratch batch)."""
    storage.remove_tree(batch.folder)
