"""Quarantine holds each held batch once, and none promoted since (lakeguard.records.quarantine), without
Spark: the plan over decisions (pure, with hypothesis), the table settled by delta-rs, what the
dashboard and the API count, `verify`'s invariant 6, and `laketx migrate` cleaning a store
written before."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, Schema
from deltalake.transaction import AddAction, create_table_with_add_actions
from hypothesis import given
from hypothesis import strategies as st

from lakeguard.records.audit import AuditData, audit
from lakeguard.records.decisions.rows import DecisionRow
from lakeguard.records.evidence import Evidence
from lakeguard.records.quarantine import (
    BATCH,
    MALFORMED,
    HeldPart,
    HoldState,
    Judged,
    covers,
    derived_pieces,
    mark_piece,
    plan,
    unwanted,
)
from lakeguard.words.hashing import to_json
from openlaketx.runner.quarantine import held_parts, settle

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)


def files(*names: str) -> tuple[str, ...]:
    return tuple(mark_piece("feed", "FILE", f"/in/{n}", f'{{"size": {len(n)}}}') for n in names)


def judged(n: int, allowed: bool, pieces: tuple[str, ...], batch: str | None = None) -> Judged:
    return Judged(
        run_id=f"r{n}",
        evaluated_at=T0 + timedelta(minutes=n),
        allowed=allowed,
        batch=batch or "+".join(pieces),
        pieces=pieces,
    )


def states(holds: dict[str, object]) -> dict[str, tuple[str, str | None]]:
    return {k: (str(h.state), h.by) for k, h in holds.items()}  # type: ignore[attr-defined]


def test_a_batch_held_retried_and_held_again_is_held_once_and_released_when_promoted() -> None:
    """The defect: 6,756 rows retried 4 times showed 27,024 quarantined rows, and a file held
    then promoted still counted in quarantine."""
    batch = files("d3.csv")
    decisions = [judged(n, False, batch) for n in range(4)]
    held = plan(decisions, present={"r0", "r1", "r2", "r3"})
    assert states(held) == {
        "r0": ("superseded", "r1"),
        "r1": ("superseded", "r2"),
        "r2": ("superseded", "r3"),
        "r3": ("held", None),
    }
    assert held["r3"].runs == ("r0", "r1", "r2", "r3")  # every attempt that held it
    parts = [HeldPart(run_id=f"r{n}", part=BATCH, rows=6756) for n in range(4)]
    assert sum(p.rows for p in parts if p not in unwanted(parts, held)) == 6756
    promoted = plan([*decisions, judged(4, True, batch)], present={"r3"})
    assert states(promoted)["r3"] == ("released", "r4")
    assert not any(h.counts for h in promoted.values())


def test_a_batch_no_later_attempt_read_again_stays_held() -> None:
    # the operator took d3 away: d4 promoted alone does not release it
    assert states(plan([judged(0, False, files("d3")), judged(1, True, files("d4"))], {"r0"})) == {
        "r0": ("held", None)
    }
    # d3 put aside as wholly malformed is not read again: d4 held next does not replace it
    assert states(
        plan([judged(0, False, files("d3")), judged(1, False, files("d4"))], {"r0", "r1"})
    )["r0"] == ("held", None)


def test_a_wider_read_covers_a_narrower_one_files_and_parent_versions() -> None:
    # a new file arrived since the hold: the next batch read the held file again, and more
    found = plan(
        [
            judged(0, False, files("a")),
            judged(1, False, files("a", "b")),
            judged(2, True, files("a", "b", "c")),
        ],
        {"r0", "r1"},
    )
    assert states(found) == {"r0": ("superseded", "r1"), "r1": ("released", "r2")}
    # a derived batch held on parent versions 4..5, then read 4..6: the same rows and more
    narrow, wide = derived_pieces('{"bronze": [3, 5]}'), derived_pieces('{"bronze": [3, 6]}')
    assert covers(wide, narrow) and not covers(narrow, wide)
    assert not covers(derived_pieces('{"bronze": [4, 6]}'), narrow)  # version 4 not read
    assert derived_pieces("a SQL model's own fingerprint") != narrow


def test_decisions_without_pieces_are_one_batch_only_by_the_same_fingerprint() -> None:
    old = [
        Judged(run_id="r0", evaluated_at=T0, allowed=False, batch="fp1"),
        Judged(run_id="r1", evaluated_at=T0 + timedelta(1), allowed=False, batch="fp1"),
        Judged(run_id="r2", evaluated_at=T0 + timedelta(2), allowed=False, batch="fp2"),
    ]
    assert states(plan(old, {"r0", "r1", "r2"})) == {
        "r0": ("superseded", "r1"),
        "r1": ("held", None),
        "r2": ("held", None),
    }


def test_a_hold_whose_move_never_happened_does_not_replace_the_one_there() -> None:
    decisions = [judged(0, False, files("a")), judged(1, False, files("a"))]
    assert states(plan(decisions, present={"r0"})) == {
        "r0": ("held", None),
        "r1": ("held", None),
    }


names = st.sampled_from(["a", "b", "c", "d"])
steps = st.lists(
    st.tuples(st.booleans(), st.sets(names, min_size=1), st.booleans()), min_size=1, max_size=8
)


@given(steps)
def test_the_plan_counts_each_read_piece_once_and_settling_it_changes_nothing_more(
    decided: list[tuple[bool, set[str], bool]],
) -> None:
    decisions = [
        judged(n, allowed, files(*sorted(read))) for n, (allowed, read, _) in enumerate(decided)
    ]
    present = {d.run_id for d, (_, _, there) in zip(decisions, decided, strict=True) if there}
    present |= {d.run_id for d in decisions if not d.allowed and d is decisions[-1]}
    holds = plan(decisions, present)
    order = {d.run_id: i for i, d in enumerate(decisions)}
    for hold in holds.values():
        if hold.by is not None:  # left for a later attempt that read all it read
            later = decisions[order[hold.by]]
            assert order[hold.by] > order[hold.run_id]
            assert later.covers(decisions[order[hold.run_id]])
            assert later.allowed == (hold.state == HoldState.RELEASED)
        else:  # still held: no later promotion read it all
            assert not any(
                d.allowed and d.covers(decisions[order[hold.run_id]])
                for d in decisions[order[hold.run_id] + 1 :]
            )
    # settled (the superseded and released parts removed), the plan asks for nothing more
    parts = [HeldPart(run_id=r, part=BATCH, rows=1) for r in sorted(present) if r in holds]
    kept = [p for p in parts if p not in unwanted(parts, holds)]
    again = plan(decisions, {p.run_id for p in kept})
    assert unwanted(kept, again) == []


def quarantine_table(location: Path, parts: dict[tuple[str, str], int]) -> None:
    """A quarantine table as the engine writes one: each attempt's files in its folder."""
    actions = []
    for (run_id, part), rows in parts.items():
        folder = location / f"run-{run_id}-{part}"
        folder.mkdir(parents=True)
        path = folder / "part-0.parquet"
        pq.write_table(
            pa.table({"lat": [float(i) for i in range(rows)], "_laketx_run_id": [run_id] * rows}),
            path,
        )
        actions.append(
            AddAction(
                f"run-{run_id}-{part}/part-0.parquet",
                path.stat().st_size,
                {},
                int(T0.timestamp() * 1000),
                True,
                f'{{"numRecords": {rows}}}',
            )
        )
    schema = Schema.from_arrow(pa.schema([("lat", pa.float64()), ("_laketx_run_id", pa.string())]))
    create_table_with_add_actions(str(location), schema, actions, mode="error")


def run_id(n: int) -> str:
    return f"{n:032x}"


def row(n: int, allowed: bool, pieces: tuple[str, ...]) -> DecisionRow:
    evidence = Evidence().about_batch(
        fail_behavior="quarantine", upstream={}, batch="+".join(pieces), read=pieces
    )
    return DecisionRow(
        tenant_id="t",
        dataset_id="bronze_x",
        run_id=run_id(n),
        from_layer="source",
        to_layer="bronze",
        allowed=allowed,
        reason="blocked by FAIL rule lat_range" if not allowed else "ok",
        evidence=to_json(evidence.to_json()),
        evaluated_at=(T0 + timedelta(minutes=n)).replace(tzinfo=None),
    )


def test_the_table_is_settled_in_one_commit_that_says_so_and_verify_finds_what_is_left(
    tmp_path: Path,
) -> None:
    location = tmp_path / "quarantine" / "bronze_x"
    batch = files("d3.csv")
    quarantine_table(
        location,
        {(run_id(0), BATCH): 5, (run_id(1), BATCH): 5, (run_id(2), MALFORMED): 2},
    )
    rows = [row(0, False, batch), row(1, False, batch), row(2, True, files("d4.csv"))]
    judgments = [Judged.from_row(r) for r in rows]
    parts = held_parts(str(location))
    assert [(p.run_id, p.part, p.rows) for p in parts] == [
        (run_id(0), BATCH, 5),
        (run_id(1), BATCH, 5),
        (run_id(2), MALFORMED, 2),
    ]
    data = AuditData(
        events=[],
        attempts=[],
        job_runs=[],
        versions=[],
        decisions=rows,
        datasets={"bronze_x": "bronze.x"},
        commits={},
        quarantine={"bronze_x": parts},
    )
    (violation,) = audit(data, lambda _: False)
    assert (violation.invariant, violation.check) == (6, "quarantine_once")
    assert run_id(0) in violation.where and "laketx migrate" in violation.fix

    looked = settle(str(location), lambda held: judgments, apply=False)
    assert [p.run_id for p in looked.removed] == [run_id(0)]
    assert DeltaTable(str(location)).to_pyarrow_table().num_rows == 12  # not applied
    done = settle(str(location), lambda held: judgments)
    assert done.said() == [f"run {run_id(0)}: 5 rows held again in run {run_id(1)}"]
    table = DeltaTable(str(location))
    assert table.to_pyarrow_table().num_rows == 7  # the batch once, and the set-aside part
    assert '"superseded"' in (table.history(1)[0].get("userMetadata") or "")
    left = held_parts(str(location))
    assert audit(replace(data, quarantine={"bronze_x": left}), lambda _: False) == []
    assert settle(str(location), lambda held: judgments).removed == []  # nothing more to do


def test_the_page_the_api_and_migrate_count_a_batch_held_again_once(tmp_path: Path) -> None:
    """A store written before each held batch was kept once: its quarantine holds one batch
    twice. The API and the page count it once and list it by batch and run, each row saying
    why it is there; `verify` reports it, and `laketx migrate`'s settling removes it."""
    from starlette.testclient import TestClient

    from lakeguard.actors.keys import Scope
    from openlaketx.config import LakehouseConfig
    from openlaketx.runner.quarantine import settle_all
    from openlaketx.service import quarantine_view
    from openlaketx.service.app import create_app
    from openlaketx.service.runs import RunService
    from openlaketx.service.tenants import Tenants
    from openlaketx.tables import dataset_location, quarantine_name
    from tests.support.project import cells_yaml, write

    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    lh = tenants.get("default")
    lh.apply(write(tmp_path / "p" / "cells.yaml", cells_yaml("_q")))
    dataset = "bronze_cells_q"
    batch = files("d3.csv")
    decisions = [
        replace(row(n, False, batch), dataset_id=dataset, tenant_id="default") for n in (0, 1)
    ]
    lh.store.append_rows(decisions, _by_gate=True)
    location = Path(dataset_location(lh.warehouse, quarantine_name(dataset)))
    quarantine_table(location, {(run_id(0), BATCH): 3, (run_id(1), BATCH): 3})

    seen = quarantine_view.quarantine(lh, dataset)
    assert seen.rows == 3  # once, though the table still has it twice
    assert [(b.run_id, b.state, b.counted, b.held_by) for b in seen.batches] == [
        (run_id(0), "superseded", False, [run_id(0)]),
        (run_id(1), "held", True, [run_id(0), run_id(1)]),
    ]
    assert {r.run_id for r in seen.sample} == {run_id(1)} and len(seen.sample) == 3
    assert all(r.why == "held with its batch: blocked by FAIL rule lat_range" for r in seen.sample)
    runs = RunService(tenants, workers=1)
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    with TestClient(create_app(runs), follow_redirects=False) as client:
        api = client.get(
            f"/api/v1/datasets/{dataset}/quarantine", headers={"Authorization": f"Bearer {token}"}
        ).json()
        csrf = client.get("/login").text.split('name="csrf" value="')[1].split('"')[0]
        client.post("/login", data={"key": token, "csrf": csrf})
        page = client.get(f"/datasets/{dataset}").text
    runs.drain(30)
    assert api == seen.model_dump(mode="json")  # the API answers what the page shows
    assert 'data-testid="quarantine-rows">3<' in page
    assert f'data-run="{run_id(0)}" data-state="superseded" data-counted="no"' in page
    assert "held with its batch: blocked by FAIL rule lat_range" in page

    assert [v.check for v in lh.verify({dataset})] == ["quarantine_once"]
    said = settle_all(lh.reader, lh.warehouse)
    assert said == {
        quarantine_name(dataset): [f"run {run_id(0)}: 3 rows held again in run {run_id(1)}"]
    }
    assert DeltaTable(str(location)).to_pyarrow_table().num_rows == 3
    assert lh.verify({dataset}) == []
    after = quarantine_view.quarantine(lh, dataset)
    assert after.rows == 3
    assert [(b.run_id, b.state, b.by) for b in after.batches] == [
        (run_id(1), "held", None),
        (run_id(0), "superseded", run_id(1)),  # settled away: listed from the table's commits
    ]
