"""Cross-reference checks of a metadata document (pure).

The models check each entry alone; this module checks how entries fit together: unique ids,
existing parents and systems, the layer rules of invariant 2, columns that rules and keys name,
vetted SQL expressions, and acyclic job graphs. Each part of the document is checked in a
module of `lakeguard.rules.catalog.checks`; this one runs them all.
"""

from __future__ import annotations

from lakeguard.rules.catalog.checks.alerts import check_alerts
from lakeguard.rules.catalog.checks.columns import dataset_columns
from lakeguard.rules.catalog.checks.datasets import check_datasets, check_drops
from lakeguard.rules.catalog.checks.graphs import check_jobs, check_lineage
from lakeguard.rules.catalog.checks.ids import duplicates
from lakeguard.rules.catalog.checks.policies import check_policies
from lakeguard.rules.catalog.checks.profiles import check_profiles
from lakeguard.rules.catalog.checks.rules import check_rules
from lakeguard.rules.catalog.checks.sources import check_sources
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.problems import Problem


def check_references(doc: MetadataDocument) -> list[Problem]:
    """Every cross-reference problem of the document (empty when it is consistent)."""
    problems: list[Problem] = [
        *check_lineage(doc),
        *check_profiles(doc),
        *check_policies(doc),
    ]
    for section in (
        "schema_profiles",
        "policies",
        "source_systems",
        "source_objects",
        "datasets",
        "rules",
        "jobs",
        "notification_channels",
        "notification_routes",
    ):
        problems += duplicates(section, [item.id for item in getattr(doc, section)])
    cols = dataset_columns(doc)
    problems += check_sources(doc)
    problems += check_datasets(doc, cols)
    problems += check_rules(doc, cols)
    problems += check_jobs(doc)
    problems += check_drops(doc)
    problems += check_alerts(doc)
    return problems
