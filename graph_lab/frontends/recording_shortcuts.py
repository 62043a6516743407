"""Speed-ups of the recording layer (``recorder.py``, ``trace.py``, ``lazy.py``, script's and compile()'s captures):
what a capture does that it need not do to be right, kept because it measurably pays.

- ``gc_paused``: Python's cyclic garbage collector is off while a capture runs. A capture makes many small objects
  that all live on (nodes, values, stand-ins), so each collection the allocations trigger scans a growing graph
  and frees nothing; reference counting still frees everything that is not in a cycle.

Measured reason (instructions, so the machine's load does not matter: ``PYTHONPATH=. python3
benchmarks/shortcut_instructions.py --sizes=8 record-gc``), a capture of the W2 chain at 8 layers:
GC_FIGURES.

Measured the same way and deleted, each saving under 3% of a trace() capture and of a compile() capture of that
chain: DELETED_FIGURES. The reference path of each is the code that reads plainly in ``recorder.py``,
``tensor.py``, ``pytree.py`` and ``ir/source.py``. ``tests/frontends/test_shortcuts_recording.py`` checks the
captures with these speed-ups against captures without them and against eager NumPy.
"""

from __future__ import annotations

import gc


class gc_paused:
    """``with gc_paused():`` turns the cyclic garbage collector off for the block (a capture), and back on
    afterwards only if it was on before. ``gc_paused.enabled = False`` makes it do nothing: the reference path."""

    enabled = True
    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        if self.enabled:
            gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()
