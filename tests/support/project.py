"""Small projects the tests write and open: YAML on disk, a landing folder, a lakehouse or a
store copied from a template, and the check that every invariant holds."""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore


def open_copy(template: Path, home: Path) -> Any:
    """A fresh lakehouse at `home`, its empty store copied from the template (fast)."""
    from openlaketx.lakehouse import Lakehouse

    shutil.copytree(template / "metadata", home / "metadata")
    return Lakehouse.open(home=home, master="local[2]")


def copied_store(template: Path, root: Path) -> MetadataStore:
    """A fresh empty store at `root` (namespace `lg`, tenant `default`), opened: a copy of
    `empty_store_template` (creating its tables took ~0.25 s; a copy and the `ensure` that
    checks it ~0.1 s). Tests of creation itself create their own."""
    from lakeguard.store import MetadataStore

    shutil.copytree(template, root)
    store = MetadataStore("lg", str(root), "default")
    store.ensure()
    return store


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


CELLS_YAML = """
version: 1
source_systems:
  - id: feed{s}
    options: {{root: feed}}
source_objects:
  - id: cells{s}_csv
    system: feed{s}
    locator: "incoming/*.csv"
    options: {{header: "true"}}
    dataset: bronze_cells{s}
    max_malformed_ratio: 0.2
    columns:
      - {{name: radio, type: string}}
      - {{name: cell, type: bigint}}
      - {{name: lat, type: double}}
      - {{name: updated, type: bigint}}
datasets:
  - id: bronze_cells{s}
    layer: bronze
    table: bronze.cells{s}
  - id: silver_cells{s}
    layer: silver
    table: silver.cells{s}
    parents: [bronze_cells{s}]
    business_keys: [radio, cell]
    sequence_by: updated
    filter: "cell IS NOT NULL"
rules:
  - {{id: lat_range{s}, dataset: bronze_cells{s}, type: RANGE, column: lat, min: -90, max: 90, severity: FAIL}}
  - {{id: radio_known{s}, dataset: bronze_cells{s}, type: ALLOWED_VALUES, column: radio, values: [GSM, LTE], severity: WARN}}
  - {{id: silver_unique{s}, dataset: silver_cells{s}, type: UNIQUE, columns: [radio, cell], severity: FAIL}}
jobs:
  - id: cells_job{s}
    tasks:
      - {{id: ingest, dataset: bronze_cells{s}}}
      - {{id: clean, dataset: silver_cells{s}, depends_on: [ingest]}}
"""


def cells_yaml(suffix: str = "") -> str:
    """The small bronze -> silver project, every id suffixed (tests share one store)."""
    return CELLS_YAML.format(s=suffix)


@dataclass
class Project:
    """A small project on disk: its YAML, its ids and a landing folder for deliveries."""

    yaml: Path
    suffix: str

    @property
    def bronze(self) -> str:
        return f"bronze_cells{self.suffix}"

    @property
    def silver(self) -> str:
        return f"silver_cells{self.suffix}"

    @property
    def job(self) -> str:
        return f"cells_job{self.suffix}"

    @property
    def incoming(self) -> Path:
        return self.yaml.parent / "feed" / "incoming"

    def deliver(self, name: str, rows: list[str]) -> Path:
        """Replace the landing folder's content with one CSV delivery."""
        self.incoming.mkdir(parents=True, exist_ok=True)
        for old in self.incoming.glob("*.csv"):
            old.unlink()
        return self.add(name, rows)

    def add(self, name: str, rows: list[str], header: str = "radio,cell,lat,updated") -> Path:
        """One more CSV file in the landing folder (earlier ones stay)."""
        return write(self.incoming / name, header + "\n" + "\n".join(rows) + "\n")


def assert_sound(lakehouse: Any, *datasets: str) -> None:
    """`laketx verify` on the datasets a scenario used: every invariant holds."""
    violations = lakehouse.verify(set(datasets))
    assert violations == [], "\n".join(f"{v.check} {v.where}: {v.what}" for v in violations)
