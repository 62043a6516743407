"""Is a captured graph equivalent to the code it came from? The course note (section 6) names four kinds:

    structural     the same nodes and edges           isomorphic(g1, g2), structural_hash(g)
    computational  the same outputs for the same inputs   check(fn, captured, spec), counterexample(fn, g)
    numeric        the same outputs within rounding   check(...) with the tolerance table (backends/tolerance.py)
    semantic       the same outputs and side effects  check(...) compares printing and watched state too

    tolerance.py   the float64 judge for reordered sums (the one table of tolerances is backends/tolerance.py)
    inputs.py      edge-case and random inputs from a spec
    compare.py     the first difference between two results
    observe.py     side effects made comparable: printed text, globals, closure cells, arguments
    locate.py      which graph of a multi-graph capture a difference comes from
    check.py       check() and counterexample()
    structure.py   canonical form, structural hash, isomorphism
"""

from .check import Difference, Report, check, counterexample
from .compare import Mismatch, compare
from .inputs import ArraySpec
from .structure import canonical_form, isomorphic, structural_hash
from .tolerance import TOLERANCES, Tolerance, tolerance_for

__all__ = ["check", "counterexample", "Report", "Difference", "Mismatch", "compare", "ArraySpec",
           "isomorphic", "structural_hash", "canonical_form", "TOLERANCES", "Tolerance", "tolerance_for"]
