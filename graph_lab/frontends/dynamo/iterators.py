"""Iterators over items of the inputs that capture takes one item at a time.

A ``for`` loop over an argument, or a loop resumed after a break inside its body, must not make the capture
depend on how many items there are (or on which one the loop is at): that would recompile for every length, or
for every iteration. A lazy iterator asks for one item at a time and guards only "there is one more"; its recipe
(see ``segment.RecipeMaker``) rebuilds the real iterator advanced by the items capture took.
"""

from __future__ import annotations

import operator

from .frame import IterState, Var
from .sources import AttrSource, Const, DerivedSource, ItemSource


class LazyIter(IterState):
    """An iterator over items of the inputs, taken one at a time: each is guarded only by "there is one more".
    A loop with a break in its body then captures each iteration's code once, for any number of items, instead
    of once per length (a list) or per position (an iterator resumed after a break)."""

    def __init__(self, ctx, source):
        super().__init__([], 0)
        self.ctx, self.source = ctx, source

    def count_left(self) -> Var:
        """How many items were left where capture started, as a derived Var."""
        raise NotImplementedError

    def item(self, n: int) -> Var:
        """The n-th item from where capture started."""
        raise NotImplementedError

    def recipe(self) -> tuple:
        raise NotImplementedError

    def _pull(self) -> bool:
        n = len(self.items)
        more = self.ctx.apply(operator.gt, [self.count_left(), Var(n)])
        self.ctx.guard(more)
        if more.value:
            self.items.append(self.item(n))
        return more.value

    def next_var(self):
        if self.pos == len(self.items) and not self._pull():
            return None
        return super().next_var()

    def pending(self) -> list:
        while self._pull():
            pass
        return super().pending()


class SequenceIter(LazyIter):
    """``iter(xs)`` for a list or tuple of the inputs (a for loop over an argument)."""

    def __init__(self, ctx, var: Var):
        self.items, self.pos = [], 0  # (what LazyIter.__init__ and IterState.__init__ set)
        self.ctx, self.source = ctx, var.source
        self.sequence = var.value
        self._count = DerivedSource(len, (self.source,), "len({0})")

    def count_left(self) -> Var:
        return Var(len(self.sequence), self._count)

    def next_var(self):
        # (LazyIter.next_var and IterState.next_var in one: FOR_ITER asks once per item)
        pos = self.pos
        if pos == len(self.items) and not self._pull():
            return None
        self.pos = pos + 1
        return self.items[pos]

    def _pull(self) -> bool:
        # LazyIter._pull's guard made directly: ``ctx.apply(operator.gt, ...)`` of the derived count and a
        # constant gives the source "len(xs) > n", and ``ctx.guard`` of a bool an "equals" guard on it. A loop
        # takes thousands of items; the set keeps only the strongest "len(xs) > n is True" (GuardSet.lower_bound).
        n = len(self.items)
        more = len(self.sequence) > n
        loc = self.ctx.loc()
        self.ctx.guards.lower_bound(self._count, n, more, loc)
        if more:
            self.items.append(self.item(n))
        return more

    def item(self, n: int) -> Var:
        return self.ctx.wrap(self.sequence[n], ItemSource(self.source, n))

    def recipe(self) -> tuple:
        return ("sequence_iter", self.source, self.pos)


class EnumerateIter(LazyIter):
    """``enumerate(xs, start)`` over a ``SequenceIter``: pairs of a known index and a lazily taken item."""

    def __init__(self, ctx, inner: SequenceIter, start: int):
        super().__init__(ctx, inner.source)
        self.inner, self.start = inner, start

    def _pull(self) -> bool:
        var = self.inner.next_var()
        if var is not None:
            self.items.append(self.ctx.build(tuple, [Var(self.start + len(self.items)), var]))
        return var is not None

    def recipe(self) -> tuple:
        return ("enumerate_iter", self.source, self.pos, self.start)


class ResumedIter(LazyIter):
    """A loop's iterator where capture resumes after a break inside the loop body."""

    def __init__(self, ctx, real: IterState, source):
        super().__init__(ctx, source)
        self.real = real

    def count_left(self) -> Var:
        return Var(items_left(self.real), DerivedSource(items_left, (self.source,), "items_left({0})"))

    def item(self, n: int) -> Var:
        ahead = DerivedSource(item_ahead, (self.source, Const(n)), "{0}.ahead({1})")
        return self.ctx.wrap(item_ahead(self.real, n).value, AttrSource(ahead, "value"))

    def recipe(self) -> tuple:
        return ("advance", self.source, self.pos)


def items_left(state: IterState) -> int:
    return len(state.items) - state.pos


def item_ahead(state: IterState, n: int) -> Var:
    return state.items[state.pos + n]
