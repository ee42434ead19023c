"""`laketx files rejected` and `laketx files release`: delivered files put aside as unreadable
(corrupt, truncated, not the declared format), listed with their reasons, and released so the
next run reads them again. No JVM."""

from __future__ import annotations

import getpass
from dataclasses import asdict, dataclass
from datetime import datetime

import typer

from lakeguard.records.sources.progress_rows import RejectedFileRow
from openlaketx import render
from openlaketx.cli.shared import JsonFlag, app, out, print_json, with_lakehouse

files_app = typer.Typer(help="Delivered files put aside as unreadable: list and release them.")
app.add_typer(files_app, name="files")


@dataclass(frozen=True)
class RejectedLine:
    """A rejected file as `laketx files rejected` lists it."""

    dataset_id: str
    source_object_id: str
    path: str
    size: int | None
    modification_time: datetime | None
    content_hash: str | None
    reason: str | None
    run_id: str | None
    rejected_at: datetime


def _row(r: RejectedFileRow) -> RejectedLine:
    return RejectedLine(
        dataset_id=r.dataset_id,
        source_object_id=r.source_object_id,
        path=r.path,
        size=r.size,
        modification_time=r.modification_time,
        content_hash=r.content_hash,
        reason=r.reason,
        run_id=r.run_id,
        rejected_at=r.recorded_at,
    )


@files_app.command("rejected")
def rejected(
    ctx: typer.Context,
    dataset: str | None = typer.Option(None, help="Only this dataset's files."),
    as_json: JsonFlag = False,
) -> None:
    """The files put aside as unreadable and still rejected: each stays so until it changes
    or is released."""
    rows = [_row(r) for r in with_lakehouse(ctx, as_json, lambda lh, _: lh.rejected_files(dataset))]
    if as_json:
        print_json(rows)
    elif not rows:
        out.print("no rejected file")
    else:
        shown = [{k: v for k, v in asdict(r).items() if k != "content_hash"} for r in rows]
        out.print(render.rows_table(shown, title=f"{len(rows)} rejected file(s)"))


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in this environment (a container, say)
        return "cli"


@files_app.command("release")
def release(
    ctx: typer.Context,
    paths: list[str] = typer.Argument(None, help="Paths (or URLs) of rejected files."),
    dataset: str | None = typer.Option(None, help="Only this dataset's files."),
    all_files: bool = typer.Option(False, "--all", help="Every rejected file of --dataset."),
    by: str | None = typer.Option(None, help="Who releases them (default: your user name)."),
    as_json: JsonFlag = False,
) -> None:
    """Release rejected files: the next run reads them again (as new files)."""
    who = by or _user()
    released = with_lakehouse(
        ctx,
        as_json,
        lambda lh, _: lh.release_files(
            paths or [], dataset_id=dataset, everything=all_files, by=who
        ),
    )
    if as_json:
        print_json({"released": [r.path for r in released]})
        return
    for row in released:
        out.print(f"released {row.path} ({row.dataset_id})", highlight=False, markup=False)
    out.print(f"{len(released)} file(s) released: the next run reads them again")
