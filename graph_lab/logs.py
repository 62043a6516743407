"""The switches read from the environment, read once, here: the logging switch
``GRAPH_LAB_LOGS=graph_breaks,guards,recompiles,graphs,passes,kernels`` or ``GRAPH_LAB_LOGS=all`` (or
``set_logs(...)``), and the strict-capture switch ``GRAPH_LAB_STRICT_CAPTURE=1`` (or ``set_strict_capture``).

Everything else calls ``emit(topic, message)`` and ``strict_capture()``. The variable and ``set_logs`` take the
same names; a name that is not a topic makes ``set_logs`` raise, and the variable (read at import, where raising
would stop every program) warn and skip it.
"""

from __future__ import annotations

import os
import sys
import warnings

from .ir.source import user_stacklevel

TOPICS = ("graph_breaks", "guards", "recompiles", "graphs", "passes", "kernels")
ALL = "all"
"""The name that turns every topic on."""
_enabled: set[str] = set()
_strict_capture = False


def _known_and_unknown(topics) -> tuple[set[str], list[str]]:
    """The topics the names turn on (``all`` means every one), and the names that are not topics."""
    unknown = [t for t in topics if t not in TOPICS and t != ALL]
    known = set(TOPICS) if ALL in topics else {t for t in topics if t in TOPICS}
    return known, unknown


def _unknown_message(unknown: list[str]) -> str:
    return f"unknown log topics {unknown}; known: {', '.join(TOPICS)}, or {ALL} for every one"


def set_logs(*topics: str) -> None:
    """Turn on logging of these topics (and off the others); each event is printed to stderr as it happens.

    Parameters:
        *topics: names from ``TOPICS``: ``"graph_breaks"``, ``"guards"``, ``"recompiles"``, ``"graphs"``,
            ``"passes"``, ``"kernels"``, or ``"all"`` for every one. ``set_logs()`` turns all off. The
            environment variable ``GRAPH_LAB_LOGS`` (comma-separated topics) sets the same switch at import.

    Raises:
        ValueError: an unknown topic, naming the known ones.
    """
    known, unknown = _known_and_unknown(topics)
    if unknown:
        raise ValueError(_unknown_message(unknown))
    _enabled.clear()
    _enabled.update(known)


def on(topic: str) -> bool:
    """Whether ``topic`` is logged (to skip making a costly message nobody reads)."""
    return topic in _enabled


def emit(topic: str, message: str) -> None:
    if topic in _enabled:
        print(f"[graph_lab:{topic}] {message}", file=sys.stderr)


def read_environment(value: str) -> None:
    """Turn on the topics named in ``value`` (``GRAPH_LAB_LOGS``'s text): warn about names that are not
    topics and log the others."""
    known, unknown = _known_and_unknown([t.strip() for t in value.split(",") if t.strip()])
    if unknown:
        warnings.warn(f"GRAPH_LAB_LOGS: {_unknown_message(unknown)}; logging the known ones only",
                      stacklevel=user_stacklevel())
    set_logs(*known)


def set_strict_capture(on: bool) -> None:
    """Raise ``InternalCaptureError`` where compile()'s capture meets an exception of graph_lab's own code (a bug of
    graph_lab), instead of breaking the graph there and reporting the break as an internal error. The test suite
    turns it on, so that no test passes over one; ``GRAPH_LAB_STRICT_CAPTURE=1`` sets it at import."""
    global _strict_capture
    _strict_capture = bool(on)


def strict_capture() -> bool:
    """Whether an internal error of capture is raised (see ``set_strict_capture``)."""
    return _strict_capture


read_environment(os.environ.get("GRAPH_LAB_LOGS", ""))
set_strict_capture(os.environ.get("GRAPH_LAB_STRICT_CAPTURE", "") not in ("", "0"))
