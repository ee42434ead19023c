"""An OpenCellID-like cell-tower feed with a realistic share of bad rows (pure Python, seeded).

Columns follow the OpenCellID export: radio, mcc, net, area, cell, lon, lat, range, samples,
changeable, created, updated. Each delivery is one CSV file.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path

HEADER = [
    "radio",
    "mcc",
    "net",
    "area",
    "cell",
    "lon",
    "lat",
    "range",
    "samples",
    "changeable",
    "created",
    "updated",
]
RADIOS = ["GSM", "UMTS", "LTE", "LTE", "LTE", "NR", "CDMA"]
# (mcc, lon, lat) centres of a few countries, so positions look plausible.
COUNTRIES = [
    (262, 10.4, 51.1),
    (208, 2.2, 46.2),
    (234, -1.5, 52.4),
    (310, -98.5, 39.8),
    (440, 138.2, 36.2),
    (505, 134.5, -25.7),
    (724, -51.9, -14.2),
]
EPOCH_START = 1_420_070_400  # 2015-01-01


@dataclass(frozen=True)
class DeliveryStats:
    path: Path
    rows: int
    bad_rows: int
    malformed_lines: int


def _cell(rng: random.Random, key: tuple[str, int, int, int, int], updated: int) -> list[str]:
    radio, mcc, net, area, cell = key
    _, lon0, lat0 = next(c for c in COUNTRIES if c[0] == mcc)
    created = updated - rng.randint(86_400, 86_400 * 900)
    return [
        radio,
        str(mcc),
        str(net),
        str(area),
        str(cell),
        f"{lon0 + rng.uniform(-4, 4):.6f}",
        f"{lat0 + rng.uniform(-3, 3):.6f}",
        str(rng.randint(100, 12_000)),
        str(rng.randint(1, 400)),
        "1",
        str(created),
        str(updated),
    ]


def make_keys(rng: random.Random, count: int) -> list[tuple[str, int, int, int, int]]:
    keys: set[tuple[str, int, int, int, int]] = set()
    while len(keys) < count:
        mcc = rng.choice(COUNTRIES)[0]
        keys.add(
            (
                rng.choice(RADIOS),
                mcc,
                rng.randint(1, 30),
                rng.randint(1, 5000),
                rng.randint(1, 268_435_455),
            )
        )
    return sorted(keys)


def _spoil(rng: random.Random, row: list[str]) -> list[str]:
    """One realistic defect: missing key, impossible position, unknown radio, bad counts."""
    row = list(row)
    kind = rng.choice(["null_cell", "lat", "lon", "radio", "mcc", "samples", "null_radio"])
    if kind == "null_cell":
        row[4] = ""
    elif kind == "lat":
        row[6] = f"{rng.choice([-1, 1]) * rng.uniform(91, 400):.6f}"
    elif kind == "lon":
        row[5] = f"{rng.choice([-1, 1]) * rng.uniform(181, 500):.6f}"
    elif kind == "radio":
        row[0] = rng.choice(["5G?", "lte ", "WIMAX"])
    elif kind == "mcc":
        row[1] = str(rng.choice([0, 999, 1]))
    elif kind == "samples":
        row[8] = "0"
    else:
        row[0] = ""
    return row


def write_delivery(
    path: Path,
    keys: list[tuple[str, int, int, int, int]],
    *,
    seed: int,
    updated_at: int,
    bad_share: float = 0.03,
    malformed_share: float = 0.002,
    duplicate_share: float = 0.01,
    bad_lat_share: float = 0.0,
) -> DeliveryStats:
    """Write one delivery of `keys` (one row each, plus some re-sent duplicates and defects)."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    bad = malformed = rows = 0
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(HEADER)
        for key in keys:
            row = _cell(rng, key, updated_at - rng.randint(0, 86_400 * 30))
            if rng.random() < bad_lat_share:
                row[6] = f"{rng.uniform(91, 180):.6f}"
                bad += 1
            elif rng.random() < bad_share:
                row = _spoil(rng, row)
                bad += 1
            if rng.random() < malformed_share:
                fh.write(",".join([row[0], row[1], "n/a", *row[3:5], "??", *row[6:]]) + "\n")
                malformed += 1
            else:
                out.writerow(row)
            rows += 1
            if rng.random() < duplicate_share:  # the feed re-sends a cell with an older update
                older = list(row)
                older[11] = str(int(row[11]) - rng.randint(3_600, 86_400))
                out.writerow(older)
                rows += 1
    return DeliveryStats(path, rows, bad, malformed)
