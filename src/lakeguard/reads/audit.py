"""The one read `lakeguard.records.audit` checks: run, version and decision rows, with the commits
of the tables they describe."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from lakeguard.reads.base import ReaderBase
from lakeguard.reads.definitions import DefinitionReads
from lakeguard.records.audit import AuditData
from lakeguard.records.commits import Commit, history
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
from lakeguard.records.sources.progress_rows import RejectedFileRow
from lakeguard.records.table_defs import load_table_defs
from lakeguard.store import deltars, joins
from lakeguard.store.store import MetadataStore


class AuditReads(ReaderBase):
    """Everything the audit checks, read at once."""

    def __init__(self, store: MetadataStore, definitions: DefinitionReads) -> None:
        super().__init__(store)
        self._definitions = definitions

    def audit_data(self, locate: Callable[[str], str]) -> AuditData:
        """Everything `lakeguard.records.audit` checks: this tenant's run, version and decision
        rows, the commits of every registered dataset's table (`locate` maps a table name to its
        location) and of every append-only metadata table."""
        store = self._store
        runtime = [n for n, t in load_table_defs().items() if t.append_only]

        def table_history(name: str) -> tuple[list[Commit], dict[str, str | None]]:
            location = store.location(name)
            return history(location), dict(deltars.load(name, location).metadata().configuration)

        with ThreadPoolExecutor(max_workers=6) as pool:
            events = pool.submit(store.read, RunEventRow)
            attempts = pool.submit(store.read, RunHistoryRow)
            job_runs = pool.submit(store.read, PipelineRunRow)
            versions = pool.submit(store.read, DataVersionRow)
            decisions = pool.submit(store.read, DecisionRow)
            rejected = pool.submit(store.read, RejectedFileRow)
            datasets = {d.dataset_id: d.table_name for d in self._definitions.datasets()}
            commits = {d: pool.submit(history, locate(t)) for d, t in datasets.items()}
            metadata = {t: pool.submit(table_history, t) for t in runtime}
            # the approved marks of datasets with rejected files: what is taken as well
            taken = {
                d: pool.submit(joins.approved_marks, store, d)
                for d in sorted({r.dataset_id for r in rejected.result()})
            }
            return AuditData(
                events=events.result(),
                attempts=attempts.result(),
                job_runs=job_runs.result(),
                versions=versions.result(),
                decisions=decisions.result(),
                datasets=datasets,
                commits={d: f.result() for d, f in commits.items()},
                append_only={t: f.result() for t, f in metadata.items()},
                now=store.now(),
                rejected=rejected.result(),
                taken={d: f.result() for d, f in taken.items()},
            )
