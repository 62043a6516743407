"""The IR: typed SSA values, nodes and graphs (``graph``), their types (``types``), printer and verifier.

Import from the submodules (``graph_lab.ir.graph``): the op table depends on ``ir.types`` and ``ir.graph``
depends on the op table, so this package's ``__init__`` imports nothing.
"""
