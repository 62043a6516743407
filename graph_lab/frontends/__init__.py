"""Frontends: ways to turn a Python function into a graph (trace, lazy tensors; later script and bytecode)."""
