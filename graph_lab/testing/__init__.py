"""Testing graph_lab against eager NumPy: random programs run every way graph_lab can run them.

    ways.py              the registry of ways to run a program: frontends x pass pipelines x backends
    program.py           a random program: a small statement tree, written out as Python source
    picker.py            what the op templates share: choosing operands, keeping values defined
    menu_elementwise.py  op templates: elementwise ops, reductions, the *_like constructors
    menu_structure.py    op templates: shapes, indexing and in-place updates, linear algebra, nn composites
    menu_control.py      op templates: convolution, pooling, batch norm, cond / while_loop / fori_loop / scan
    generator.py         grows programs: ops, Python control flow, side effects, reads of guarded state
    differential.py      the oracle: eager vs each way, call by call; reproducer scripts
    shrink.py            makes a failing program small
    metamorphic.py       identities that change graphs, not results

The suites that use them (F1-F8) are in tests/equivalence/fuzz/; ``python3 dev.py fuzz`` runs them.
"""
