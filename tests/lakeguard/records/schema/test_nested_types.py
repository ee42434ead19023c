"""Nested column types (array, map, struct) as a document declares them, parsed by LakeGuard
without Spark or sqlglot, and refused where the source's format has none (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeguard.records.schema.types import TypeProblem, canonical, is_nested, parse_type, spark_ddl
from lakeguard.rules.catalog.loader import load_file
from lakeguard.words.errors import ValidationError

SCALARS = ["string", "boolean", "int", "bigint", "double", "float", "date", "timestamp"]
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


def trees(depth: int = 3) -> st.SearchStrategy[str]:
    """Type strings as Spark's simpleString writes them, nested up to `depth`."""
    scalar = st.sampled_from([*SCALARS, "decimal(10,2)", "decimal(38,0)"])
    if depth == 0:
        return scalar
    inner = trees(depth - 1)
    return st.one_of(
        scalar,
        inner.map(lambda t: f"array<{t}>"),
        inner.map(lambda t: f"map<string,{t}>"),
        st.lists(
            st.tuples(names, inner), min_size=1, max_size=3, unique_by=lambda f: f[0].lower()
        ).map(lambda fs: "struct<" + ",".join(f"{n}:{t}" for n, t in fs) + ">"),
    )


@given(trees(), st.sampled_from(["", " ", "  "]), st.booleans())
def test_a_nested_type_reads_back_as_spark_writes_it(text: str, space: str, upper: bool) -> None:
    """Any spacing and keyword case parses to the same simpleString; field names keep case."""
    spaced = (
        text.replace("<", f"<{space}").replace(",", f"{space},{space}").replace(">", f"{space}>")
    )
    written = spaced.upper() if upper else spaced
    if not upper:
        assert parse_type(written).simple() == text
    else:  # upper-casing renames the fields too: compare the kinds only
        assert parse_type(written).simple().lower() == text.lower()


def test_canonical_and_ddl_keep_field_names() -> None:
    declared = "struct< userId : bigint, tags: array<string>, attrs: map<string, long>>"
    assert (
        canonical(declared) == "struct<userId:bigint,tags:array<string>,attrs:map<string,bigint>>"
    )
    assert spark_ddl(declared) == (
        "STRUCT<`userId`: BIGINT, `tags`: ARRAY<STRING>, `attrs`: MAP<STRING, BIGINT>>"
    )
    assert canonical("long") == "long" and spark_ddl("decimal(10,2)") == "DECIMAL(10,2)"
    assert is_nested("array<int>") and is_nested("STRUCT <a:int>") and not is_nested("string")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("struct<a:int", "expected ',' at character 13"),
        ("array<varchar>", "unknown type 'varchar'"),
        ("map<int,string>", "a map's keys are strings"),
        ("struct<a:int,A:string>", "field 'A' is declared twice"),
        ("struct<>", "expected a field name at character 8"),
        ("array<int>>", "unexpected text after the type"),
        ("decimal(40,2)", "precision is 1 to 38"),
    ],
)
def test_a_bad_type_says_what_and_where(text: str, said: str) -> None:
    with pytest.raises(TypeProblem) as info:
        parse_type(text)
    assert said in str(info.value)


DOC = """
source_systems:
  - {{id: feed, kind: {kind}, options: {options}}}
source_objects:
  - id: things
    system: feed
    locator: {locator}
    format: {fmt}
    dataset: bronze_things
    columns:
      - {{name: id, type: bigint}}
      - {{name: owner, type: "struct<name:string,since:date>"}}
      - {{name: tags, type: "array<string>"}}
datasets:
  - {{id: bronze_things, layer: bronze}}
"""


def problems(tmp_path: Path, **parts: str) -> str:
    path = tmp_path / "d.yaml"
    path.write_text(DOC.format(**parts), encoding="utf-8")
    try:
        load_file(path)
    except ValidationError as exc:
        return str(exc)
    return ""


def test_json_sources_take_nested_types_and_csv_or_jdbc_ones_are_refused(tmp_path: Path) -> None:
    files = {"kind": "file", "options": "{root: feed}", "locator": "'*.json'"}
    assert problems(tmp_path, **files, fmt="json") == ""
    csv = problems(tmp_path, **files, fmt="csv")
    assert (
        "owner is struct<name:string,since:date>: nested types (array, map, struct) are read" in csv
    )
    assert "not csv" in csv and "tags is array<string>" in csv
    assert "source_objects[0].columns[1].type" in csv  # where, with its line
    jdbc = problems(
        tmp_path,
        kind="jdbc",
        options='{url: "jdbc:postgresql://h/db"}',
        locator="public.t",
        fmt="jdbc",
    )
    assert "owner is struct<name:string,since:date>" in jdbc and "not jdbc" in jdbc


def test_a_bad_nested_type_is_refused_at_its_column(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    bad = DOC.format(kind="file", options="{root: feed}", locator="'*.json'", fmt="json")
    path.write_text(bad.replace("array<string>", "array<strin>"), encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        load_file(path)
    assert "unknown type 'strin'" in str(info.value)


PII_DOC = """
source_systems:
  - {id: feed, options: {root: feed}}
source_objects:
  - id: people
    system: feed
    locator: "*.json"
    format: json
    dataset: bronze_people
    columns:
      - {name: id, type: bigint}
      - {name: owner, type: "struct<name:string,email:string>", pii: true}
datasets:
  - {id: bronze_people, layer: bronze}
  - id: silver_people
    layer: silver
    parents: [bronze_people]
    columns: {id: id, COLUMNS}
policies:
  - {id: no_raw_pii, type: PII, applies_to: [silver], enforcement: BLOCK}
"""


def test_a_struct_field_reads_its_struct_column(tmp_path: Path) -> None:
    """`owner.email` in a columns mapping is field email of struct owner: a column the
    dataset has (not an unknown column `email`), and raw pii when owner is pii."""

    def problems(columns: str) -> str:
        path = tmp_path / "d.yaml"
        path.write_text(PII_DOC.replace("COLUMNS", columns), encoding="utf-8")
        try:
            load_file(path)
        except ValidationError as exc:
            return str(exc)
        return ""

    raw = problems("email: owner.email")
    assert "unknown column" not in raw
    assert "pii column(s) email reach silver raw" in raw
    assert problems("email: 'sha2(owner.email, 256)'") == ""
    assert "unknown column(s) nobody" in problems("email: nobody.email")
