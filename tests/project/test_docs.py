"""The repository stands on its own: nothing tracked refers to a file outside it, every path the
docs name exists, docs/design.md keeps the numbering code and tests cite, the guides hold no
dated entries, and every benchmark result is a run kept as data (no Spark)."""

from __future__ import annotations

import glob
import json
import re
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lakeguard.records.table_defs import load_table_defs

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
DESIGN = ROOT / "docs" / "design.md"

# What points outside the repository: this machine's work tree, or the design document that
# used to live beside the repository instead of in it (it is docs/design.md now).
OUTSIDE = re.compile(
    r"/wor[k]/|shared[/]DESIGN|DESIGN[.]md"
)  # brackets keep it from matching itself
# A relative path that climbs (`../x`, read from the folder of the file naming it, as a link is);
# a `..` inside a path (`a/../b`) is a value under test, not a reference.
CLIMBING = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-]*)")
# A metadata store recorded as an old laketx wrote it (tests/fixtures/make_store_v0.py). Its
# Delta logs and rows keep the absolute path it was written at, as a record of where it came
# from: nothing reads or follows that path (the migration tests compare rows only).
RECORDED = ("tests/fixtures/store_v0/",)

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED = re.compile(r"`((?:docs|bench|src|tests|examples|scripts)/[^`\s]*)`")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.decode().split("\0") if p]


def test_no_tracked_file_refers_outside_the_repository() -> None:
    found = []
    for name in _tracked():
        if name.startswith(RECORDED):
            continue
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            climbs_out = any(
                not (path.parent / m.group(1)).resolve().is_relative_to(ROOT)
                for m in CLIMBING.finditer(line)
            )
            if climbs_out or OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert not found, "refers outside the repository (name it inside, e.g. docs/design.md):\n" + (
        "\n".join(found)
    )


def _named_paths(doc: Path) -> Iterator[tuple[str, Path]]:
    """Each path `doc` names: markdown links (from its folder), backticked repository paths."""
    text = FENCE.sub("", doc.read_text())
    for match in LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if target and "://" not in target and not target.startswith("mailto:"):
            yield match.group(1), doc.parent / target
    for match in NAMED.finditer(text):
        yield match.group(1), ROOT / match.group(1)


def _exists(path: Path) -> bool:
    pattern = re.sub(r"<[^>]+>", "*", str(path))  # `tables/<table>.yaml` names any table
    if glob.glob(pattern) if "*" in pattern else path.exists():
        return True
    # what a command makes where git ignores it (bench/data/...) is named, not shipped
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False)
    return ignored.returncode == 0


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    missing = [
        named
        for named, path in _named_paths(doc)
        if not _exists(path) or not path.resolve().is_relative_to(ROOT)
    ]
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


def _section(text: str, number: str) -> str:
    start = text.index(f"\n## {number}. ")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_the_design_lists_every_metadata_table_and_only_those() -> None:
    shipped = set(load_table_defs())  # definition tables by YAML, runtime ones by row class
    rows = re.findall(r"^\| `(\w+)` \|", _section(DESIGN.read_text(), "3"), re.M)
    assert len(rows) == len(set(rows)), "a table is listed twice"
    assert set(rows) == shipped


def test_the_invariants_keep_their_numbers() -> None:
    """Code and tests cite "invariant 7" and "§4": the design and the test table agree on 1..10."""
    design = re.findall(r"^(\d+)\. \*\*", _section(DESIGN.read_text(), "4"), re.M)
    assert [int(n) for n in design] == list(range(1, 11))
    testing = (ROOT / "docs" / "testing.md").read_text()
    table = re.findall(r"^\| (\d+) ", testing, re.M)
    assert [int(n) for n in table] == list(range(1, 11))
    for number in ("1", "2", "3", "4", "5", "5a", "6", "7"):
        _section(DESIGN.read_text(), number)  # raises when a cited section is gone


def test_the_package_map_names_every_package_and_module() -> None:
    """docs/architecture.md's map names each package (`store/`) and each module (`reader.py`);
    the modules of a kinds package and the numbered migrations are named by their rule."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        rel = path.relative_to(ROOT / "src")
        if path.name == "__init__.py":
            if len(rel.parts) > 2 and f"`{rel.parts[-2]}/`" not in text:
                missing.append(f"{rel.parent}/")
            continue
        one_per_kind = rel.parts[-2] in ("kinds", "migrations")
        if not one_per_kind and f"`{path.name}`" not in text and f"`{path.stem}.py`" not in text:
            missing.append(str(rel))
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)


# Docs are a guide, not a diary: history is data (bench/results/, commit bodies, CHANGELOG.md).
UNDATED = [ROOT / "docs" / "testing.md", ROOT / "bench" / "README.md"]
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
BENCH_README_LINES = 300


@pytest.mark.parametrize("doc", UNDATED, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_a_guide_holds_no_dated_entry(doc: Path) -> None:
    dated = [
        f"{doc.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for n, line in enumerate(doc.read_text().splitlines(), 1)
        if DATE.search(line)
    ]
    assert not dated, "a date in a guide (measurements go in bench/results/):\n" + "\n".join(dated)


def test_the_benchmarks_page_stays_short() -> None:
    lines = len((ROOT / "bench" / "README.md").read_text().splitlines())
    assert lines <= BENCH_README_LINES, f"bench/README.md has {lines} lines"


RESULT_NAME = re.compile(r"(\d{8}T\d{6}Z)-([0-9a-f]{7}|unknown)(-\d+)?\.json")
RESULT_KEYS = {"bench", "time", "commit", "dirty", "machine", "args", "figures"}
CARRIED_FROM = ("bench/README.md before ", "docs/testing.md before ")


def test_every_result_is_a_run_kept_as_data() -> None:
    """Each `bench/results/<bench>/<UTC time>-<commit>.json` holds what bench/results.py writes:
    its bench's name, a UTC time and commit that match its file name, the machine, the
    arguments and the figures; one carried over from the docs says where from."""
    files = sorted((ROOT / "bench" / "results").glob("*/*.json"))
    assert files, "no results in bench/results/"
    wrong = []
    for path in files:
        where = path.relative_to(ROOT).as_posix()
        name = RESULT_NAME.fullmatch(path.name)
        run = json.loads(path.read_text())
        time = datetime.fromisoformat(run.get("time", ""))
        commit = run.get("commit")
        checks = {
            "named <UTC time>-<commit>.json": name is not None,
            "holds every field": run.keys() >= RESULT_KEYS,
            "in its bench's folder": run.get("bench") == path.parent.name,
            "a UTC time": time.utcoffset() == timedelta(0),
            "the time of its name": name is not None and f"{time:%Y%m%dT%H%M%SZ}" == name[1],
            "the commit of its name": name is not None
            and name[2] == (commit[:7] if commit else "unknown"),
            "a whole commit or none": commit is None or re.fullmatch(r"[0-9a-f]{40}", commit),
            "figures": isinstance(run.get("figures"), dict) and bool(run["figures"]),
            "a source it was carried from": "source" not in run
            or str(run["source"]).startswith(CARRIED_FROM),
        }
        wrong += [f"{where}: not {what}" for what, ok in checks.items() if not ok]
    assert not wrong, "\n".join(wrong)
