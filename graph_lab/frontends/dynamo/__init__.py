"""Bytecode capture (TorchDynamo-style): symbolically run a function's CPython bytecode, record tensor
operations into graphs, guard what the capture depended on, and break the graph where Python must run."""
