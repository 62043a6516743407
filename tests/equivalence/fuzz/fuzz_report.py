"""What every fuzz suite reports: one ``Figure``, a few labelled numbers and the failures, printed as a table."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Figure:
    suite: str
    """``F1 differential``, ``F7 malformed inputs``..."""
    rows: list[tuple[str, object]] = field(default_factory=list)
    """(label, value), in the order printed."""
    failures: list[str] = field(default_factory=list)
    """One text per failure (a reproducer, a message); a passing suite has none."""
    seconds: float = 0.0

    def add(self, label: str, value) -> None:
        self.rows.append((label, value))

    def value(self, label: str):
        return dict(self.rows)[label]

    @property
    def ok(self) -> bool:
        return not self.failures

    def text(self) -> str:
        width = max([len(label) for label, _ in self.rows] + [10])
        lines = [f"{self.suite}  ({self.seconds:.1f} s, {'PASS' if self.ok else 'FAIL'})"]
        lines += [f"  {label.ljust(width)}  {_format(value)}" for label, value in self.rows]
        for failure in self.failures[:5]:
            lines.append("  failure:")
            lines += ["    " + line for line in failure.splitlines()]
        if len(self.failures) > 5:
            lines.append(f"  ... and {len(self.failures) - 5} more failures")
        return "\n".join(lines)


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
