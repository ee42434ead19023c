"""The suite's helpers: servers it starts, projects it writes, processes it kills and the
records it plants (docs/testing.md). Fixtures stay in tests/conftest.py."""
