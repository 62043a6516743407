"""The address of an array's data, as a kernel call passes it through ctypes.

``a.ctypes.data`` builds a ctypes helper object on every use: about 1 us per array, measured on the course machine,
which a kernel call pays once per operand and result (15 times for an Adam step's kernel: more than NumPy's own
dispatch of the whole chain on small arrays). A zero-length ctypes array made on the array's buffer
(``from_buffer``) is passed by ctypes as the address of that buffer, in about a third of the time. It needs a
writable buffer; a read-only array (a constant, a caller's array marked read-only) takes the slow way.
"""

from __future__ import annotations

import ctypes

import numpy as np

_EMPTY = ctypes.c_char * 0


def address(a: np.ndarray):
    """Something ctypes passes as ``a``'s data pointer (``a`` is C-contiguous)."""
    try:
        return _EMPTY.from_buffer(a)
    except TypeError:  # a read-only buffer
        return a.ctypes.data
