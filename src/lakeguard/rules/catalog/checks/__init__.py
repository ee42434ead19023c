"""The cross-reference checks of a metadata document, one part of the document per module
(datasets, rules, sources, jobs and lineage, profiles, policies; the dataset columns they
check names against); `lakeguard.rules.catalog.references` runs them all."""
