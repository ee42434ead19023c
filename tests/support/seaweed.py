"""A real S3-compatible object store for the tests: SeaweedFS, started by the suite itself.

`scripts/seaweedfs.sh` builds the `weed` binary once from its pinned Go module and caches it
(like the Delta jars), so a fresh machine needs no manual step. `weed mini` runs the master,
a volume server, the filer and the S3 gateway in one process, which the tests start on
127.0.0.1 with every port free and chosen here (several workers run one each), with one
identity whose keys are in an AWS-style credentials file, so wrong keys fail as on AWS.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from tests.support.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "lake"
ACCESS_KEY = "laketx-test"
SECRET_KEY = "laketx-test-secret-9c1f"
# master, volume, filer, S3 and admin, each with its gRPC port
PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)
READY_WITHIN = 120.0  # seconds: a cold start on a busy machine takes a few
RELAUNCHES = 3  # launches again when a port picked free was taken before the server bound it


def weed_binary() -> str:
    """The cached `weed` binary (built on first use)."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "seaweedfs.sh")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot get SeaweedFS: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


@dataclass
class SeaweedS3:
    """One running server: its endpoint, and the file holding its keys."""

    root: Path
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def credentials_file(self) -> Path:
        return self.root / "credentials"

    def env(self) -> dict[str, str]:
        """The settings that point laketx at this server (keys by reference: the file)."""
        return {
            "LAKETX_S3_ENDPOINT": self.endpoint,
            "LAKETX_S3_REGION": "us-east-1",
            "LAKETX_S3_PATH_STYLE": "true",
            "LAKETX_S3_CREDENTIALS_FILE": str(self.credentials_file),
        }

    def point_at(self, monkeypatch: Any) -> str:
        """Set this server's settings in the environment (children inherit them), with no
        `AWS_*` keys of the machine's in the way; returns an `s3://` prefix no test uses."""
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        return self.fresh_prefix()

    def fresh_prefix(self) -> str:
        """An `s3://` prefix no other test uses."""
        return f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"

    def filesystem(self) -> pafs.S3FileSystem:
        """A plain S3 client (Arrow's) on the server, to look at what was written."""
        return pafs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            region="us-east-1",
            force_virtual_addressing=False,
        )

    def keys_under(self, prefix: str) -> list[str]:
        """Every object key under an `s3://bucket/prefix`."""
        path = prefix.removeprefix("s3://")
        selector = pafs.FileSelector(path, recursive=True, allow_not_found=True)
        infos = self.filesystem().get_file_info(selector)
        return sorted(i.path for i in infos if i.type == pafs.FileType.File)

    def stop(self, *, keep: bool = False) -> None:
        """Stop the server; its folder goes too unless `keep`. A server whose objects are
        kept stops cleanly (it takes SeaweedFS ~9 s); one whose folder goes is killed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM if keep else signal.SIGKILL)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def _write_config(root: Path) -> Path:
    identities = {
        "identities": [
            {
                "name": "laketx",
                "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    config = root / "s3.json"
    config.write_text(json.dumps(identities))
    (root / "credentials").write_text(
        f"[default]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
    )
    return config


def wait_ready(server: SeaweedS3) -> SeaweedS3:
    """Until the bucket answers through a real S3 client (or the server dies); the server
    that answers. Its ports are picked free before it binds them, so another process (the
    other worker's server, starting at the same time) may take one first: a server that died
    of that is launched again on new ports, up to RELAUNCHES times."""
    deadline = time.monotonic() + READY_WITHIN
    fs = server.filesystem()
    relaunches = 0
    while True:
        if server.proc.poll() is not None:
            log = (server.root / "weed.log").read_text(errors="replace")[-2000:]
            taken = "address already in use" in log or "is not available" in log
            if taken and relaunches < RELAUNCHES:
                relaunches += 1
                server = launch(server.root)  # the same folder, new ports
                fs = server.filesystem()
                continue
            raise RuntimeError(f"SeaweedFS exited with {server.proc.returncode}:\n{log}")
        try:
            if fs.get_file_info(BUCKET).type == pafs.FileType.Directory:
                return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"SeaweedFS did not serve bucket {BUCKET} in {READY_WITHIN}s")
        time.sleep(0.2)


def start(folder: Path | None = None) -> SeaweedS3:
    """A server keeping its objects in `folder` (default: a new temporary folder), its S3
    gateway on a free port of 127.0.0.1, once it serves the bucket."""
    return wait_ready(launch(folder))


def launch(folder: Path | None = None) -> SeaweedS3:
    """`start` without the wait: the server is starting (`wait_ready` waits for it), so the
    caller can do other work meanwhile (its start is ~5 s, mostly waiting)."""
    binary = weed_binary()
    root = folder.resolve() if folder else Path(tempfile.mkdtemp(prefix="laketx-s3-"))
    (root / "data").mkdir(parents=True, exist_ok=True)
    config = _write_config(root)
    ports = dict(zip(PORTS, free_ports(len(PORTS)), strict=True))
    args = [
        binary,
        "mini",
        f"-dir={root / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-bucket={BUCKET}",
        f"-s3.config={config}",
        *(f"-{flag}={port}" for flag, port in ports.items()),
        # what the suite does not use stays off, so it takes no port
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-admin.port.legacy=0",
        "-admin.ui=false",
        "-webdav=false",
        "-master.volumeSizeLimitMB=64",
    ]
    with open(root / "weed.log", "wb") as log:
        proc = subprocess.Popen(
            args,
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        )
    return SeaweedS3(root=root, proc=proc, port=ports["s3.port"])


def demo(home: Path) -> int:
    """`make demo-s3`: the demo, from scratch, with its data tables and metadata on a SeaweedFS
    server started for it (objects in `<home>/objects`); prints where the lakehouse lives."""
    shutil.rmtree(home, ignore_errors=True)  # the folder is the target's own: a fresh start
    server = start(home / "objects")
    metadata = f"s3://{BUCKET}/demo/metadata"
    warehouse = f"s3://{BUCKET}/demo/warehouse"
    env = {
        **os.environ,
        **server.env(),
        "LAKETX_HOME": str(home.resolve()),
        "LAKETX_METADATA_HOME": metadata,
        "LAKETX_WAREHOUSE": warehouse,
    }
    print(
        f"the lakehouse lives on {server.endpoint}: data tables at {warehouse}, "
        f"metadata at {metadata}/lakeguard"
    )
    try:
        done = subprocess.run([str(Path(sys.executable).with_name("laketx")), "demo"], env=env)
    finally:
        server.stop(keep=True)
    print(
        f"\nthe lakehouse lived at {warehouse} (data tables) and {metadata}/lakeguard "
        f"(metadata) on the S3 server {server.endpoint} (SeaweedFS, stopped now; its objects "
        f"are in {server.root}); the demo's feed files are under {home.resolve()}"
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(demo(Path(sys.argv[1] if len(sys.argv) > 1 else "lakehouse-s3")))
