"""A run's time limit (`run_time_limit_seconds`): a timer that cancels the run's Spark jobs
when it fires, and checks between phases for the work that is not a Spark job (a delta-rs
merge, an HTTP fetch), so that none of it runs on past the limit either.

Cancelling reaches only the jobs running at that moment: a job the run submits a moment later
(the limit falls while Spark plans the next one) would run on. So once fired, the timer
cancels again every `again` seconds until the run ends.

A batch the gate has decided on is carried out whole: the decision, the commit (or the
quarantine) and the version that records it are one step, and cutting between them would
leave a decision nothing carried out or a commit no version records. The limit is checked
just before the decision is recorded, and stops the run at the next check after.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Protocol

from lakeguard.words.errors import TimeLimitExceeded


class _Timer(Protocol):
    daemon: bool

    def start(self) -> None: ...

    def cancel(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...

    def is_alive(self) -> bool: ...


class RunDeadline:
    """One run's limit (None: no limit). `start` arms it with what cancels the run's Spark
    work; `stop` disarms it when the run ends, before anything else runs on its thread."""

    def __init__(
        self,
        limit: float | None = None,
        *,
        timer: Callable[[float, Callable[[], None]], _Timer] = threading.Timer,
        clock: Callable[[], float] = time.monotonic,
        again: float = 0.5,
    ) -> None:
        self.limit = limit
        self.again = again
        self._timer_of = timer
        self._clock = clock
        self._lock = threading.Lock()
        self._cancel: Callable[[], object] = lambda: None
        self._timer: _Timer | None = None
        self._due: float | None = None
        self._fired = False
        self._publishing = False
        self._stopped = False

    def start(self, cancel: Callable[[], object]) -> None:
        """Start counting; when the limit is reached, `cancel()` runs on the timer's thread."""
        if self.limit is None:
            return
        self._cancel = cancel
        self._due = self._clock() + self.limit
        with self._lock:
            self._arm(self.limit)

    def _arm(self, seconds: float) -> None:
        self._timer = self._timer_of(seconds, self._fire)
        self._timer.daemon = True  # a forgotten timer never keeps a process alive
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._fired = True
            # while publishing, nothing is cancelled: the publish finishes and the next check
            # stops the run
            cancel = (lambda: None) if self._publishing else self._cancel
        # Outside the lock: a publish that would start now is refused by `begin_publishing`. Best
        # effort: if cancelling fails, the next check stops the run all the same.
        with suppress(Exception):
            cancel()
        with self._lock:
            if not self._stopped:
                self._arm(self.again)

    @property
    def expired(self) -> bool:
        """Whether the limit was reached (the timer fired, or its time has come)."""
        return self._fired or (self._due is not None and self._clock() >= self._due)

    def check(self) -> None:
        """Raise TimeLimitExceeded once the limit is reached (never while publishing)."""
        with self._lock:
            if not self._publishing and self.expired:
                raise self.exceeded()

    def begin_publishing(self) -> None:
        """The last check before a decision is recorded: past the limit it raises; else,
        until `end_publishing`, the timer cancels nothing and checks pass."""
        with self._lock:
            if self.expired:
                raise self.exceeded()
            self._publishing = True

    def end_publishing(self) -> None:
        """The decided batch was carried out (or its attempt ended): the limit applies again."""
        with self._lock:
            self._publishing = False

    def explain(self, exc: BaseException) -> BaseException:
        """What a run's failure was: the limit, when it was reached (a cancelled Spark job
        raises its own error), else `exc` itself (always while publishing: nothing was
        cancelled then)."""
        if isinstance(exc, TimeLimitExceeded) or not isinstance(exc, Exception):
            return exc
        if self._publishing:
            return exc
        if self.expired:
            error = self.exceeded()
            error.__cause__ = exc
            return error
        return exc

    def exceeded(self, published: Sequence[str] = ()) -> TimeLimitExceeded:
        """The run's terminal reason; `published`: what it promoted before the limit."""
        done = f" but {', '.join(published)}, promoted before the limit" if published else ""
        return TimeLimitExceeded(
            f"the run exceeded its time limit of {self.limit or 0:g} s (run_time_limit_seconds); "
            f"its Spark jobs were cancelled; nothing was published{done}",
            fix="raise run_time_limit_seconds (LAKETX_RUN_TIME_LIMIT), or give the run less "
            "to do: smaller deliveries, cheaper rules and columns",
        )

    def stop(self) -> None:
        """Disarm: the timer fires into nothing, now or later, and a cancel already under way
        has ended when this returns (so it cannot reach the thread's next run)."""
        with self._lock:
            self._stopped = True
            timer = self._timer  # the last one: `_fire` arms the next under this lock
        if timer is not None:
            timer.cancel()
            if timer is not threading.current_thread() and timer.is_alive():
                timer.join()
