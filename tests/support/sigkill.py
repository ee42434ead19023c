"""Kill a real run from outside: SIGKILL to the child's whole process group (its Python driver
and its JVM, as when a machine or a container dies), sent while a chosen phase runs.

The child announces each phase of the run on its stdout as it enters it (the runner's progress
hook: "<dataset>: stage", "<dataset>: write", ...). The parent waits for the phase, waits
`delay` seconds more, and sends the signal; the child cannot see it coming, so the kill can land
anywhere inside the phase: between two files of a staged batch, before or after a commit, in
the middle of a MERGE.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.children import ROOT, Lines

CHILD = """
import sys
from openlaketx.lakehouse import Lakehouse
from tests.support.environment import TEST_CONF
home, target = sys.argv[1:3]
lh = Lakehouse.open(home=home, master="local[1]", spark_conf=TEST_CONF)
result = lh.run(target, progress=lambda message: print(message, flush=True))
print("ended", result.status, flush=True)
"""


@dataclass(frozen=True)
class Kill:
    """Where a SIGKILL landed: the phases the child announced before it died."""

    phase: str
    delay: float
    announced: list[str]

    @property
    def landed(self) -> str:
        """The phase the child was in when it died (the last it announced)."""
        return self.announced[-1]


def kill_in_phase(home: Path, target: str, phase: str, delay: float, log: Path) -> Kill:
    """Run `target` in a child and SIGKILL it `delay` seconds after it enters `phase`."""
    with log.open("w", encoding="utf-8") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(home), target],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,  # its own process group: the JVM dies with it
        )
        lines = Lines(child)
        try:
            lines.until(lambda line: line == phase, timeout=600)
            time.sleep(delay)
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=60)
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(timeout=60)
    lines.rest(timeout=60)
    assert child.returncode == -signal.SIGKILL, log.read_text()[-3000:]
    _wait_until_gone(child.pid)
    return Kill(phase, delay, lines.seen)


def _wait_until_gone(group: int, timeout: float = 60) -> None:
    """Until no process of the killed group is left running (its JVM included)."""
    if not Path("/proc/self/stat").exists():  # no procfs: SIGKILL to a group is final anyway
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [pid for pid in _members(group) if _state(pid) not in ("Z", "X", None)]
        if not alive:
            return
        time.sleep(0.05)
    raise AssertionError(f"processes of group {group} outlived SIGKILL")


def _members(group: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group:
                    found.append(int(entry.name))
            except ProcessLookupError:
                continue
    return found


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


class PhaseClock:
    """A progress hook that times each phase of an in-process run (until the next one)."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.lasted: dict[str, float] = {}
        self._last: str | None = None

    def __call__(self, message: str) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.lasted[self._last] = now - self.started[self._last]
        self.started[message], self._last = now, message

    def duration(self, phase: str) -> float:
        return self.lasted[phase]
