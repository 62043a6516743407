"""Speed-ups of the recording layer (``recorder.py``, ``trace.py``, ``lazy.py``, script's and compile()'s captures):
what a capture does that it need not do to be right, kept because it measurably pays.

- ``gc_paused``: Python's cyclic garbage collector is off while a capture runs. A capture makes many small objects
  that all live on (nodes, values, stand-ins), so each collection the allocations trigger scans a growing graph
  and frees nothing; reference counting still frees everything that is not in a cycle.

Measured reason: a ``script`` capture of the W2 chain at 8 layers runs 19.1% fewer instructions with the
collector paused (``PYTHONPATH=. python3 benchmarks/shortcut_instructions.py --sizes=8 script-gc``, callgrind).
For trace() and compile() at 8 layers the saving is within the method's noise (4.3% and -3.8%, ``record-gc`` and
``record-gc@compile``): a capture that small triggers few collections, and a longer one more.

Measured with the same method and deleted (W2 chain, 8 layers; trace() / compile() captures): ``Recorder.emit``'s
inline operand check (-3.8% / 5.1%), its branch for one output that is no view (5.8% / 5.8%), the constant
snapshot's ``copy(order="K")`` (the chain has no constant: -2.7% / -11.6%, which is the noise of the method),
``call_op``'s test for regions being traced (13.4% / 7.6%), ``Tensor.shape``'s test for static sizes,
``pytree.tree_map``'s shortcut for one-level containers (2.5% / 4.5%) and ``broadcast_shapes``' for equal shapes
(3.9% / 3.5%, though with the type rules' memo it runs a few times per capture). Each figure is the difference of
two processes' counts, and a shortcut that cannot run on the chain "saved" up to 11.6%: none of these could be
told from zero, and each made the code a student reads longer. The reference path of each is the code that reads
plainly in ``recorder.py``, ``tensor.py``, ``pytree.py`` and ``ops/base.py``.
``tests/frontends/test_shortcuts_recording.py`` checks captures with the speed-ups against captures without them
and against eager NumPy.
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
