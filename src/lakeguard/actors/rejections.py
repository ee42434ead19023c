"""An operator's release of files put aside as unreadable (`rejected_files`): the next run
reads a released file again, as a new one (no Spark).

A read puts a file aside when it cannot read it (`on_bad_file: reject`); the file stays
rejected until it changes, an approved batch takes it, or it is released here. A release is
one `RELEASED` row per file, appended: nothing is updated or deleted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lakeguard.records.sources.progress_rows import RejectedFileRow
from lakeguard.words.errors import ConfigError, NotRegisteredError

if TYPE_CHECKING:
    from lakeguard.reads.reader import StoreReader
    from lakeguard.store.store import MetadataStore

_FIX = "`laketx files rejected` lists the rejected files with their paths"


def spellings(path: str) -> set[str]:
    """The ways a rejected file's path may be recorded for what an operator typed: as typed,
    and a local path absolute, with its links resolved, and as Hadoop names it (`file:/x`)."""
    if "://" in path and not path.startswith("file:"):
        return {path}  # a URL or an object store's URI: recorded as it is
    local = path.removeprefix("file:")
    local = "/" + local.lstrip("/") if path.startswith("file:") else os.path.abspath(local)
    found = {path}
    for form in (local, os.path.realpath(local)):
        found |= {form, f"file:{form}"}
    return found


def release(
    store: MetadataStore,
    reader: StoreReader,
    *,
    paths: Sequence[str] = (),
    dataset_id: str | None = None,
    everything: bool = False,
    by: str,
) -> list[RejectedFileRow]:
    """Release rejected files: those at `paths` (of `dataset_id` only, when given), or every
    one of `dataset_id` (`everything`). Returns the releases appended; a path that names no
    rejected file is an error, and nothing is released then."""
    if everything == bool(paths):
        raise ConfigError(
            "name the files to release, or --all with --dataset",
            where="laketx files release",
            fix="laketx files release PATH..., or laketx files release --dataset D --all",
        )
    if everything and dataset_id is None:
        raise ConfigError(
            "--all releases every rejected file of one dataset: name it with --dataset",
            where="laketx files release",
            fix="laketx files release --dataset D --all",
        )
    if dataset_id is not None:
        reader.definitions.dataset(dataset_id)  # an unknown dataset is NotRegisteredError
    rejected = reader.versions.rejected_files(dataset_id)
    if everything:
        chosen = rejected
    else:
        chosen = []
        for path in paths:
            forms = spellings(path)
            found = [r for r in rejected if r.path in forms]
            if not found:
                where = f" of {dataset_id}" if dataset_id else ""
                raise NotRegisteredError(
                    f"no rejected file{where} at {path}", where="rejected_files", fix=_FIX
                )
            chosen += [r for r in found if r not in chosen]
    now = store.now()
    releases = [r.release(by, now) for r in chosen]
    if releases:
        store.append_rows(releases)
    return releases
