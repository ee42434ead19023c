"""Where a bench runs, for the governed job and its bare baseline alike: Spark's master
(`--master`, else local mode) and where the tables live (`--s3 s3://bucket/prefix`: the
lakehouse's metadata and warehouse and the bare job's table on an object store, else the
bench's local work folder).

The object store's endpoint and credentials are the lakehouse's own settings (the settings
file's `object_store` section or `LAKETX_S3_*`, docs/object-store.md). The delivered files stay
in the local work folder, so a cluster's workers must see it (a worker on this machine does,
as `python -m tests.support.standalone` starts one). Each run writes under a prefix of its
own, which `cleanup` removes.
"""

from __future__ import annotations

import argparse
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def add_place_flags(parser: argparse.ArgumentParser) -> None:
    """`--master URL` and `--s3 URI`, for `Place.of` to read from the parsed arguments."""
    parser.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="Spark's master for both jobs, e.g. spark://127.0.0.1:7077 (default: local mode)",
    )
    parser.add_argument(
        "--s3",
        default=None,
        metavar="URI",
        help="keep the lakehouse and the bare table under this s3:// prefix (default: local "
        "disk); the endpoint and credentials are the lakehouse's settings",
    )


@dataclass(frozen=True)
class Place:
    """A bench's master and table location."""

    master: str | None = None
    s3: str | None = None
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    @classmethod
    def of(cls, args: argparse.Namespace) -> Place:
        s3 = getattr(args, "s3", None)
        if s3 is not None and not s3.startswith("s3://"):
            raise SystemExit(f"--s3 takes an s3:// URI, not {s3!r}")
        return cls(getattr(args, "master", None), s3.rstrip("/") if s3 else None)

    @property
    def prefix(self) -> str | None:
        """This run's own prefix on the object store (None: local disk)."""
        return f"{self.s3}/laketx-bench-{self.run}" if self.s3 else None

    def lakehouse(self, name: str) -> dict[str, Any]:
        """`Lakehouse.open` settings beyond its home for the lakehouse called `name`."""
        settings: dict[str, Any] = {}
        if self.master:
            settings["master"] = self.master
        if self.prefix:
            settings["metadata_home"] = f"{self.prefix}/{name}/metadata"
            settings["warehouse_home"] = f"{self.prefix}/{name}/warehouse"
        return settings

    def table(self, local: Path, name: str) -> str:
        """Where the bare job writes the table called `name` (`local` on local disk)."""
        return f"{self.prefix}/bare/{name}" if self.prefix else str(local)

    def describe(self) -> dict[str, str]:
        """The place, for a results file."""
        return {
            "master": self.master or "local[*]",
            "tables": "s3 (" + self.s3 + ")" if self.s3 else "local disk",
        }

    def cleanup(self) -> None:
        """Remove this run's objects from the object store."""
        if self.prefix:
            from openlaketx import storage  # the engine: only when a bench used the store

            storage.remove_tree(self.prefix)
