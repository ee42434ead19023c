"""A Spark standalone cluster for the tests: one master and one worker on 127.0.0.1, started
from the pyspark installation's own classes (`bin/spark-class`), on free ports.

Each daemon runs in a process group of its own, so stopping one kills what it started too
(the worker's executors). `python -m tests.support.standalone` starts one and waits, for trying
`laketx run --master spark://...` by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.environment import FAST_JVM
from tests.support.ports import free_ports

READY_WITHIN = 180.0  # seconds: two JVMs starting on a busy machine


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """End a daemon and everything in its process group (TERM, then KILL)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group's other members too
    proc.wait(timeout=30)


def jvm_options() -> str:
    """The suite's fast JVM options and the driver's class-data archive: the daemons and the
    executors load the same Spark classes from the same installation as a driver."""
    from openlaketx import class_archive
    from openlaketx.config import LakehouseConfig

    archive = class_archive.driver_options(LakehouseConfig().jar_cache)
    return " ".join([*archive, FAST_JVM]).strip()


@dataclass
class Standalone:
    """A running master and worker, and where their logs go."""

    folder: Path
    port: int
    ui_port: int
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def state(self) -> dict[str, Any]:
        """The master's own account of itself (workers, applications) from its JSON page."""
        url = f"http://127.0.0.1:{self.ui_port}/json/"
        with urllib.request.urlopen(url, timeout=10) as answer:
            state: dict[str, Any] = json.load(answer)
        return state

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.folder.glob("*.log"))

    def start_daemon(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> None:
        """Start `bin/spark-class ARGS` in a process group of its own; `env`: the environment
        it starts from (default: this process's)."""
        log = (self.folder / f"{name}.log").open("wb")
        environ = {
            **(os.environ if env is None else env),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(self.folder),
            "SPARK_DAEMON_JAVA_OPTS": jvm_options(),
        }
        self.procs.append(
            subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environ,
                start_new_session=True,
            )
        )

    def wait_for_worker(self) -> None:
        deadline = time.monotonic() + READY_WITHIN
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a daemon ended (code {proc.returncode}):\n{self.logs()}")
            with contextlib.suppress(OSError, ValueError):
                if any(w.get("state") == "ALIVE" for w in self.state().get("workers", [])):
                    return
            time.sleep(0.5)
        raise RuntimeError(f"no worker registered in {READY_WITHIN} s:\n{self.logs()}")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop_group(proc)


def without_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without any `AWS_*` or `LAKETX_*` variable: what a worker on another machine
    has, where nobody set up laketx or an AWS identity."""
    return {k: v for k, v in env.items() if not k.startswith(("AWS_", "LAKETX_"))}


def start(
    folder: Path | None = None,
    *,
    memory: str = "1g",
    worker_env: Mapping[str, str] | None = None,
) -> Standalone:
    """A master and one worker (one core, `memory`) on 127.0.0.1, the worker registered;
    `worker_env`: the environment the worker (and so its executors) starts from, default
    this process's."""
    where = folder or Path(tempfile.mkdtemp(prefix="laketx-standalone-"))
    port, ui_port, worker_port, worker_ui = free_ports(4)
    cluster = Standalone(where, port, ui_port)
    try:
        cluster.start_daemon(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)),
        )
        cluster.start_daemon(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            *("--host", "127.0.0.1", "--port", str(worker_port)),
            *("--webui-port", str(worker_ui), "--cores", "1", "--memory", memory),
            *("--work-dir", str(where / "work"), cluster.master_url),
            env=worker_env,
        )
        cluster.wait_for_worker()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    # Ctrl-C or a TERM stops the cluster too (a background shell job ignores SIGINT otherwise)
    signal.signal(signal.SIGINT, _exit)
    signal.signal(signal.SIGTERM, _exit)
    running = start()
    print(f"master {running.master_url}, web UI http://127.0.0.1:{running.ui_port}", flush=True)
    try:
        signal.pause()
    finally:
        running.stop()
