"""A benchmark's run, kept as data: one JSON file under `bench/results/<bench>/`.

Every benchmark calls `record` at the end of its `main`, whatever it printed. The file,
`<UTC time>-<short commit>.json`, holds the benchmark's name, its figures (what `--json`
prints), the arguments it ran with, the git commit and whether the work tree had uncommitted
changes, the machine (host name, cores, memory, load average, platform, Python and Java
versions) and the UTC time. `--results DIR` (`add_flags`) puts it elsewhere, `--no-results`
writes nothing: the suite's smoke tests write into a temporary folder, never into the
repository.

A figure measured by hand (a `make test` wall time, say) is kept the same way:

    .venv/bin/python bench/results.py make_test wall_s=1032 passed=550 --arg where=checkout
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# where the file goes, not what was measured: not kept among the arguments
WHERE = ("results", "no_results")


def add_flags(parser: argparse.ArgumentParser) -> None:
    """`--results DIR` and `--no-results`, for `record` to read from the parsed arguments."""
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        metavar="DIR",
        help="write this run's figures under DIR/<bench>/ (default: bench/results)",
    )
    parser.add_argument("--no-results", action="store_true", help="write no results file")


def record(
    bench: str, figures: Mapping[str, Any], args: argparse.Namespace | Mapping[str, Any]
) -> Path | None:
    """Write `figures` of a run of `bench` with `args` as `<results>/<bench>/<time>-<commit>.json`
    and return its path; None (nothing written) when `args` says `no_results`."""
    if not re.fullmatch(r"[a-z0-9_]+", bench):
        raise ValueError(f"a bench's name is lower-case letters, digits and _: {bench!r}")
    given = dict(vars(args) if isinstance(args, argparse.Namespace) else args)
    if given.get("no_results"):
        return None
    folder = Path(given.get("results") or RESULTS) / bench
    now = datetime.now(UTC)
    commit, dirty = _commit()
    run = {
        "bench": bench,
        "time": now.isoformat(timespec="seconds"),
        "commit": commit,
        "dirty": dirty,
        "machine": machine(),
        "args": {k: _portable(v) for k, v in given.items() if k not in WHERE},
        "figures": dict(figures),
    }
    text = json.dumps(run, indent=2, default=str) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{now:%Y%m%dT%H%M%SZ}-{(commit or 'unknown')[:7]}"
    for n in range(1, 100):  # two runs within one second of one commit
        path = folder / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(text)
        except FileExistsError:
            continue
        print(f"[results] {path}", file=sys.stderr, flush=True)
        return path
    raise FileExistsError(f"{folder / stem}.json and 98 more exist")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _commit() -> tuple[str | None, bool | None]:
    """The checked-out commit, and whether the work tree differs from it, untracked files
    included but not the results themselves (None: not a checkout)."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain")
    if status is None:
        return commit, None
    changed = [line[3:] for line in status.splitlines()]
    return commit, any(not path.startswith("bench/results/") for path in changed)


def machine() -> dict[str, Any]:
    """What the figures were measured on; each part None where this machine does not say."""
    return {
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _memory(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "java": _java(),
    }


def _memory() -> int | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    found = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) * 1024 if found else None


def _java() -> str | None:
    """The Java version: from its home's `release` file, else one `java -version`."""
    home = os.environ.get("JAVA_HOME")
    binary = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if binary is None:
        return None
    release = Path(binary).resolve().parents[1] / "release"
    try:
        found = re.search(r'^JAVA_VERSION="([^"]+)"', release.read_text(), re.M)
    except OSError:
        found = None
    if found:
        return found.group(1)
    try:
        done = subprocess.run(
            [binary, "-version"], capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (done.stderr or done.stdout).splitlines()
    return first[0].strip() if first else None


def _portable(value: Any) -> Any:
    """A path inside the repository as relative to it: a committed results file names no
    folder of the machine that ran it."""
    if isinstance(value, Path) and value.resolve().is_relative_to(ROOT):
        return value.resolve().relative_to(ROOT).as_posix()
    return value


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _pairs(items: list[str], parser: argparse.ArgumentParser) -> dict[str, Any]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"{item!r} is not KEY=VALUE")
        pairs[key] = _value(value)
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record figures measured by hand.")
    parser.add_argument("bench", help="what was measured (the folder under bench/results)")
    parser.add_argument("figures", nargs="+", metavar="KEY=VALUE", help="a figure (JSON value)")
    parser.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE")
    add_flags(parser)
    args = parser.parse_args(argv)
    where = {"results": args.results, "no_results": args.no_results}
    path = record(args.bench, _pairs(args.figures, parser), {**_pairs(args.arg, parser), **where})
    if path is not None:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
