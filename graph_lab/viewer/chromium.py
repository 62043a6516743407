"""Headless Chromium, to check that a viewer page renders and to take its screenshot.

Used by the tests and by ``docs/make_screenshot.py``; ``import graph_lab`` does not load it. Chromium is not a
dependency of graph_lab: on Debian, ``apt-get install -y chromium`` (``.ci/run`` does it).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_SECONDS = 60

# Flags for a quiet, offline, one-shot run as root in a container: no sandbox (root), no GPU, and none of the
# background services (updates, sync, QUIC) that would try to reach the network.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")

_REPORT = re.compile(r'<div id="render-report"([^>]*)>(.*?)</div>', re.DOTALL)
_DATA = re.compile(r'data-([a-z-]+)="([^"]*)"')


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable, or None."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(page: Path, extra: list[str], timeout: float) -> subprocess.CompletedProcess:
    browser = find_chromium()
    if browser is None:
        raise FileNotFoundError("Chromium is not installed; on Debian: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="graph-lab-chromium-") as profile:
        command = [browser, *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def render_report(page: Path, timeout: float = TIMEOUT_SECONDS) -> dict[str, str]:
    """Open ``page``, let its scripts run, and return the attributes of its ``#render-report`` element
    (``nodes``, ``errors``, ...) plus ``text``: the errors it listed, one per line."""
    result = _run(page, ["--dump-dom"], timeout)
    match = _REPORT.search(result.stdout)
    if match is None:
        raise RuntimeError(f"no render report in the page Chromium dumped (exit code {result.returncode}); "
                           f"stderr:\n{result.stderr[-2000:]}")
    report = dict(_DATA.findall(match.group(1)))
    report["text"] = html.unescape(match.group(2))
    return report


def screenshot(page: Path, png: Path, width: int = 1400, height: int = 1000,
               timeout: float = TIMEOUT_SECONDS) -> Path:
    """Save a ``width`` x ``height`` PNG of ``page`` as a browser window shows it."""
    result = _run(page, [f"--screenshot={png.resolve()}", f"--window-size={width},{height}"], timeout)
    if not png.exists():
        raise RuntimeError(f"Chromium wrote no screenshot (exit code {result.returncode}); "
                           f"stderr:\n{result.stderr[-2000:]}")
    return png
