"""script()."""
