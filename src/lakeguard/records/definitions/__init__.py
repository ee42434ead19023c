"""A tenant's definitions: datasets, jobs and API keys as rows
(`datasets.py`, `jobs.py`, `keys.py`), the rows a document makes (`sets.py`: `DefinitionSet`)
and the typed records of datasets, jobs, rules and policies (`records.py`)."""
