"""The one logging switch: ``GRAPH_LAB_LOGS=graph_breaks,guards,recompiles,graphs,passes,kernels`` (or
``set_logs(...)``).

Read once, here; everything else calls ``emit(topic, message)``.
"""

from __future__ import annotations

import os
import sys

TOPICS = ("graph_breaks", "guards", "recompiles", "graphs", "passes", "kernels")
_enabled: set[str] = set()


def set_logs(*topics: str) -> None:
    """Turn on logging of these topics (and off the others); each event is printed to stderr as it happens.

    Parameters:
        *topics: names from ``TOPICS``: ``"graph_breaks"``, ``"guards"``, ``"recompiles"``, ``"graphs"``,
            ``"passes"``, ``"kernels"``. ``set_logs()`` turns all off. The environment variable
            ``GRAPH_LAB_LOGS`` (comma-separated topics) sets the same switch at import.

    Raises:
        ValueError: an unknown topic, naming the known ones.
    """
    unknown = [t for t in topics if t not in TOPICS]
    if unknown:
        raise ValueError(f"unknown log topics {unknown}; known: {', '.join(TOPICS)}")
    _enabled.clear()
    _enabled.update(topics)


def on(topic: str) -> bool:
    """Whether ``topic`` is logged (to skip making a costly message nobody reads)."""
    return topic in _enabled


def emit(topic: str, message: str) -> None:
    if topic in _enabled:
        print(f"[graph_lab:{topic}] {message}", file=sys.stderr)


set_logs(*[t.strip() for t in os.environ.get("GRAPH_LAB_LOGS", "").split(",") if t.strip() in TOPICS])
