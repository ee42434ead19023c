"""Which Delta table features the store's writer (delta-rs) cannot write (pure).

delta-rs refuses, or would silently break, tables that use identity columns, CLUSTER BY,
row tracking or domain metadata. The store checks every metadata table when it opens, so such
a table is named with its feature before anything is written to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Writer feature name -> what a user calls it.
UNWRITABLE_FEATURES = {
    "identityColumns": "identity columns",
    "clustering": "CLUSTER BY (liquid clustering)",
    "rowTracking": "row tracking",
    "domainMetadata": "domain metadata",
}

# Table properties that switch those features on (a table can carry them before the protocol
# lists the feature, e.g. when created by an older writer).
_FEATURE_PROPERTIES = {
    "delta.enableRowTracking": "rowTracking",
    "delta.feature.identityColumns": "identityColumns",
    "delta.feature.clustering": "clustering",
    "delta.feature.rowTracking": "rowTracking",
    "delta.feature.domainMetadata": "domainMetadata",
}

# Legacy writer version 6 implies identity columns (protocol table of the Delta spec).
_LEGACY_IDENTITY_VERSION = 6


def unwritable_features(
    *,
    min_writer_version: int,
    writer_features: Iterable[str] | None,
    configuration: Mapping[str, str | None],
    field_metadata: Iterable[Mapping[str, Any]] = (),
) -> list[str]:
    """Human names of the features of a table that delta-rs cannot write (empty when none)."""
    found: set[str] = set()
    for feature in writer_features or ():
        if feature in UNWRITABLE_FEATURES:
            found.add(feature)
    if writer_features is None and min_writer_version == _LEGACY_IDENTITY_VERSION:
        found.add("identityColumns")
    for key, feature in _FEATURE_PROPERTIES.items():
        value = configuration.get(key)
        if value is not None and str(value).lower() in ("true", "supported", "enabled"):
            found.add(feature)
    for metadata in field_metadata:
        if any(str(k).startswith("delta.identity.") for k in metadata):
            found.add("identityColumns")
    return sorted(UNWRITABLE_FEATURES[f] for f in found)
