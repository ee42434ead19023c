"""Metadata read ahead: what a later phase of a step needs, read on a thread of its own while
Spark stages the batch. The dataset's lease keeps what such a read sees from changing before
the phase asks for it, so the answer is the one the phase would have read itself."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def read_ahead(read: Callable[[], T]) -> Future[T]:
    """`read()` started now on a daemon thread; its answer, or its error, when asked for.
    Nothing waits for an answer nobody asks for (a step that stops early)."""
    future: Future[T] = Future()

    def work() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(read())
        except BaseException as exc:  # handed to whoever asks, as the read itself would raise
            future.set_exception(exc)

    threading.Thread(target=work, name="laketx-read-ahead", daemon=True).start()
    return future
