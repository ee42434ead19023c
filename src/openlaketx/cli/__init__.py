"""`laketx`: a thin CLI over the Lakehouse facade. Parses, calls, prints.

Human output by default (rich tables, a spinner while Spark works), `--json` for machines, one
clean error line with a documented exit code on failure (`--debug` shows the traceback).

`shared.py` holds the typer app and what every command uses; each group of commands is a module
of its own that registers them on the app; this file assembles them into the one `app`.
"""

from __future__ import annotations

from openlaketx.cli.shared import app

# Each module registers its commands on the app, in the order `laketx --help` lists them.
# isort: off
from openlaketx.cli import catalog, execution, files, audit, metadata, service  # noqa: F401
# isort: on


def main() -> None:
    """Console entry point: a missing prerequisite is one line, not a traceback."""
    app()


__all__ = ["app", "main"]
