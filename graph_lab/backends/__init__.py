"""Backends: ways to run a graph. ``interpret`` is the reference."""
