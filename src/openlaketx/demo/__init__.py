"""The demo pipeline: an OpenCellID-like feed through bronze and silver."""
