"""Policies: platform guarantees (PII, SCHEMA, SLA, VOLUME) checked before every write."""
