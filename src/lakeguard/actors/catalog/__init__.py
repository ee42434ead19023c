"""Apply a metadata document to the store, watch it, report changes."""
