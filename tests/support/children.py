"""Child processes the tests can wait on without hanging: a line reader with a timeout, and
a start barrier at the one point a lease race is decided.

The barrier: each child, patched with `watch_lease_decisions`, writes every decision it takes
on the lease table to a file of its own (`ACQUIRE`, `RENEW` or `held`); with `hold_first` its
first decision, made but not yet committed, waits until the parent writes the release file.
A parent that has seen every child decide `ACQUIRE` before releasing them has proof that their
attempts overlapped: each one read the lease table before any of them committed.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RELEASE = "release"
HELD = "held"  # a decision that found the dataset taken


class Lines:
    """The lines a child writes to its stdout, each one waited for with a timeout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def next(self, timeout: float) -> str | None:
        """The next line (None at the end of the output); AssertionError after `timeout` s."""
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line from pid {self.proc.pid} in {timeout} s") from None
        if line is not None:
            self.seen.append(line)
        return line

    def until(self, wanted: Callable[[str], bool], timeout: float) -> str:
        """Lines up to the first one `wanted` accepts; AssertionError if the output ends first."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"pid {self.proc.pid} ended before it; it wrote {self.seen}")
            if wanted(line):
                return line

    def rest(self, timeout: float) -> list[str]:
        """Every line left, up to the end of the output."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while self.next(max(0.0, deadline - time.monotonic())) is not None:
            pass
        return self.seen[start:]


def watch_lease_decisions(folder: str, name: str, *, hold_first: bool) -> None:
    """In a child process: log each decision on the lease table to `folder/name`; with
    `hold_first`, the first one waits (decided, not committed) for `folder/release`."""
    from lakeguard.store.store import MetadataStore

    real = MetadataStore.append_if
    log = Path(folder, name)

    def append_if(self: MetadataStore, row_type: Any, decide: Any, **kwargs: Any) -> Any:
        if row_type.TABLE.name != "dataset_leases":
            return real(self, row_type, decide, **kwargs)

        def logged(rows: Any) -> Any:
            decided = decide(rows)
            first = not log.exists()
            what = HELD if decided is None else ",".join(sorted({r.action for r in decided}))
            with log.open("a", encoding="utf-8") as out:
                out.write(what + "\n")
            if first and hold_first:
                _wait_for(Path(folder, RELEASE))
            return decided

        return real(self, row_type, logged, **kwargs)

    MetadataStore.append_if = append_if  # type: ignore[method-assign]


def _wait_for(path: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"never released: {path}")
        time.sleep(0.01)


def decisions(folder: Path, name: str) -> list[str]:
    """The lease decisions a child has logged so far."""
    log = folder / name
    if not log.exists():
        return []
    return log.read_text(encoding="utf-8").split("\n")[:-1]  # whole lines only


def wait_for_decisions(
    folder: Path,
    names: Sequence[str],
    procs: Sequence[subprocess.Popen[str]],
    *,
    count: int = 1,
    timeout: float = 600,
) -> dict[str, list[str]]:
    """Wait until every child in `names` has logged `count` decisions (failing if one ends
    first); what each logged."""
    deadline = time.monotonic() + timeout
    while True:
        found = {n: decisions(folder, n) for n in names}
        if all(len(d) >= count for d in found.values()):
            return found
        for name, proc in zip(names, procs, strict=True):
            if proc.poll() is not None and len(found[name]) < count:
                raise AssertionError(
                    f"{name} ended (code {proc.returncode}) having logged {found[name]}"
                )
        if time.monotonic() > deadline:
            raise AssertionError(f"not every child decided in {timeout} s: {found}")
        time.sleep(0.02)


def release(folder: Path) -> None:
    (folder / RELEASE).touch()


LEASE_CHILD = """
import sys
from datetime import timedelta
from tests.support.children import watch_lease_decisions
from lakeguard.words.errors import WriteConflict
from lakeguard.store import MetadataStore, RunWriter
root, folder, name, wanted = sys.argv[1:5]
watch_lease_decisions(folder, name, hold_first=True)
s = MetadataStore('lg', root, 'default'); s.ensure()
writer, ttl = RunWriter(s), timedelta(minutes=5)
try:
    if ',' in wanted:
        writer.acquire_leases(wanted.split(','), name, ttl=ttl)
    else:
        writer.acquire_lease(wanted, name, ttl=ttl)
    print('won', flush=True)
except WriteConflict:
    print('lost', flush=True)
sys.stdin.read()  # a winner stays alive (a dead holder's lease is free)
"""


@contextmanager
def lease_race(root: str, folder: Path, wants: Sequence[str]) -> Iterator[list[str]]:
    """Processes `run0`, `run1`, ... each wanting the leases in `wants[i]` (comma-separated),
    released from one start line once each has decided to take them on the same state of the
    lease table (asserted). Yields their outcomes ("won" or "lost") while the winners still
    hold their leases; the losers must have lost a compare-and-set, then seen the winner."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"run{i}" for i in range(len(wants))]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LEASE_CHILD, root, str(folder), name, want],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, want in zip(names, wants, strict=True)
    ]
    try:
        lines = [Lines(p) for p in procs]
        first = wait_for_decisions(folder, names, procs, timeout=120)
        # every child read the table and chose to acquire before any of them committed
        assert all(d == ["ACQUIRE"] for d in first.values()), first
        release(folder)
        outcomes = [line.next(timeout=120) or "" for line in lines]
        for name, outcome in zip(names, outcomes, strict=True):
            if outcome == "lost":  # its commit lost to the winner's; its retry saw the lease
                assert decisions(folder, name) == ["ACQUIRE", HELD], name
        yield outcomes
    finally:
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.communicate("", timeout=60)
            if p.poll() is None:
                p.kill()


CLI_CHILD = """
import sys
from tests.support.children import watch_lease_decisions
folder, name, hold_first, *args = sys.argv[1:]
watch_lease_decisions(folder, name, hold_first=hold_first == "hold")
from openlaketx.cli import main
sys.argv = ["laketx", *args]
main()
"""


def laketx_watched(
    folder: Path, name: str, *args: str, hold_first: bool = False
) -> subprocess.Popen[str]:
    """`laketx ARGS` in a child whose lease decisions are logged to `folder/name` (see
    `watch_lease_decisions`)."""
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-c", CLI_CHILD, str(folder), name, "hold" if hold_first else "go", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
