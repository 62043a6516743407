"""Passes: one module per pass. A pass takes a valid graph and leaves a valid graph (it says whether it edits the
graph in place or returns a new one) and reports what it changed."""
