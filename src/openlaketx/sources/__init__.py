"""Source connectors: files (csv, json, parquet)."""
