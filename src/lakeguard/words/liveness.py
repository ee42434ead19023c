"""Who is running where: the worker id of this process and whether another one is gone.

A worker is `host:pid`. A worker on this host whose process is gone is known dead; a worker on
another host cannot be checked and is trusted until its lease or run goes stale.
"""

from __future__ import annotations

import os
import socket


def worker_instance() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def known_dead(worker: str | None) -> bool:
    """True when `worker` ran on this host and its process no longer exists."""
    host, _, pid = (worker or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return int(pid) != os.getpid() and not _process_alive(int(pid))
