"""Metadata as code: YAML models, validation, plan and apply."""
