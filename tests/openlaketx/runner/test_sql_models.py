"""Gold (and silver) as SQL models over several parents, pinned at approved snapshots."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.rules.catalog.loader import load_file
from lakeguard.words.errors import ValidationError
from tests.support.project import write

MODEL = """
WITH per_radio AS (
  SELECT radio, count(*) AS cells, avg(lat) AS avg_lat FROM silver_cells{s} GROUP BY radio
)
SELECT g.generation, p.radio, p.cells, round(p.avg_lat, 3) AS avg_lat,
       rank() OVER (ORDER BY p.cells DESC, p.radio) AS rnk
FROM per_radio p JOIN silver_radios{s} g ON g.radio = p.radio
"""


def document(s: str, model: str = MODEL, refresh_keys: str = "") -> str:
    indented = textwrap.indent(model.format(s=s).strip(), " " * 6)
    return f"""
source_systems:
  - {{id: feed{s}, options: {{root: feed}}}}
source_objects:
  - id: cells{s}_csv
    system: feed{s}
    locator: "cells/*.csv"
    options: {{header: "true"}}
    dataset: bronze_cells{s}
    columns: [{{name: radio}}, {{name: cell, type: bigint}}, {{name: lat, type: double}}, {{name: updated, type: bigint}}]
  - id: radios{s}_csv
    system: feed{s}
    locator: "radios/*.csv"
    options: {{header: "true"}}
    dataset: bronze_radios{s}
    columns: [{{name: radio}}, {{name: generation}}]
datasets:
  - {{id: bronze_cells{s}, layer: bronze}}
  - {{id: silver_cells{s}, layer: silver, parents: [bronze_cells{s}], business_keys: [radio, cell], sequence_by: updated}}
  - {{id: bronze_radios{s}, layer: bronze}}
  - {{id: silver_radios{s}, layer: silver, parents: [bronze_radios{s}], business_keys: [radio]}}
  - id: gold_radios{s}
    layer: gold{refresh_keys}
    sql: |
{indented}
jobs:
  - id: radios_job{s}
    tasks:
      - {{id: cells, dataset: bronze_cells{s}}}
      - {{id: radios, dataset: bronze_radios{s}}}
      - {{id: silver_cells, dataset: silver_cells{s}, depends_on: [cells]}}
      - {{id: silver_radios, dataset: silver_radios{s}, depends_on: [radios]}}
      - {{id: gold, dataset: gold_radios{s}, depends_on: [silver_cells, silver_radios]}}
"""


def deliver(root: Path, folder: str, name: str, text: str) -> None:
    write(root / "feed" / folder / name, text)


def test_a_model_names_its_parents_and_every_error_is_located(tmp_path: Path) -> None:
    from lakeguard.rules.catalog.to_rows import document_rows

    doc = load_file(write(tmp_path / "ok.yaml", document("_v")))
    rows = {r.dataset_id: r for r in document_rows(doc).dataset_registry}
    assert rows["gold_radios_v"].parents == ["silver_cells_v", "silver_radios_v"]
    bad_models = {
        "SELECT * FROM nowhere_v": "unknown dataset 'nowhere_v'",
        "SELECT radio FROM silver_cells_v; DROP TABLE x": "exactly one statement",
        "DELETE FROM silver_cells_v": "not a query",
        "SELECT my_udf(radio) FROM silver_cells_v": "unknown function my_udf()",
        "SELECT reflect('java.lang.Runtime', 'getRuntime') FROM silver_cells_v": "reflect()",
        "SELECT colour FROM silver_cells_v": "Column 'colour' could not be resolved",
        "SELECT * FROM delta.`/etc` ": "name parents by dataset id",
    }
    for model, message in bad_models.items():
        with pytest.raises(ValidationError) as info:
            load_file(write(tmp_path / "bad.yaml", document("_v", model)))
        text = str(info.value)
        assert message in text and "datasets[4].sql (line" in text, text


@pytest.mark.spark
def test_gold_joins_and_aggregates_approved_snapshots_only(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_gold"
    doc = write(tmp_path / "radios.yaml", document(s))
    lh.apply(doc)
    deliver(
        tmp_path, "cells", "c1.csv", "radio,cell,lat,updated\nGSM,1,10,1\nGSM,2,20,1\nLTE,3,30,1\n"
    )
    deliver(tmp_path, "radios", "r1.csv", "radio,generation\nGSM,2G\nLTE,4G\n")
    first = lh.run(f"radios_job{s}")
    assert first.status == "COMPLETED", first.error

    def gold() -> list[tuple[Any, ...]]:
        rows = lh.read(f"gold_radios{s}").collect()
        return sorted(
            (r["generation"], r["radio"], r["cells"], r["avg_lat"], r["rnk"]) for r in rows
        )

    assert gold() == [("2G", "GSM", 2, 15.0, 1), ("4G", "LTE", 1, 30.0, 2)]
    reader = StoreReader(lh.store)
    (v1,) = reader.versions.versions(f"gold_radios{s}")
    assert v1.upstream_refs == {f"silver_cells{s}": 1, f"silver_radios{s}": 1}

    # a commit around the gate on a parent is not read: models see approved snapshots only
    lh.sql(f"INSERT INTO silver.silver_radios{s} (radio, generation) VALUES ('UMTS', '3G')")
    deliver(tmp_path, "cells", "c2.csv", "radio,cell,lat,updated\nLTE,4,50,2\nUMTS,5,70,2\n")
    second = lh.run(f"radios_job{s}")
    assert second.status == "COMPLETED", second.error
    assert gold() == [("2G", "GSM", 2, 15.0, 1), ("4G", "LTE", 2, 40.0, 2)]  # no UMTS
    v2 = reader.versions.versions(f"gold_radios{s}")[-1]
    assert v2.version == 2 and v2.upstream_refs == {f"silver_cells{s}": 2, f"silver_radios{s}": 1}

    third = lh.run(f"radios_job{s}")  # nothing new anywhere: no version anywhere
    assert all(st.data_version is None for st in third.steps)
    assert len(reader.versions.versions(f"gold_radios{s}")) == 2
    (planted,) = lh.verify(
        {d.dataset_id for d in reader.definitions.datasets() if d.dataset_id.endswith(s)}
    )
    assert planted.check == "commit_around_the_gate" and f"silver_radios{s}" in planted.where


@pytest.mark.spark
def test_refresh_by_key_recomputes_only_touched_keys(shared_lakehouse: Any, tmp_path: Path) -> None:
    lh, s = shared_lakehouse, "_keyed"
    model = "SELECT radio, count(*) AS cells, max(lat) AS top FROM silver_cells{s} GROUP BY radio"
    lh.apply(write(tmp_path / "keyed.yaml", document(s, model, "\n    refresh_keys: [radio]")))
    deliver(tmp_path, "cells", "c1.csv", "radio,cell,lat,updated\nGSM,1,10,1\nLTE,2,20,1\n")
    deliver(tmp_path, "radios", "r1.csv", "radio,generation\nGSM,2G\n")
    assert lh.run(f"radios_job{s}").status == "COMPLETED"
    deliver(tmp_path, "cells", "c2.csv", "radio,cell,lat,updated\nLTE,3,40,2\n")
    second = lh.run(f"radios_job{s}")
    assert second.status == "COMPLETED", second.error
    rows = {
        r["radio"]: (r["cells"], r["top"], r["_laketx_version"])
        for r in lh.read(f"gold_radios{s}").collect()
    }
    assert rows == {"GSM": (1, 10.0, 1), "LTE": (2, 40.0, 2)}  # GSM untouched, LTE recomputed
