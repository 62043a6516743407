"""How long the course's lecture-12 script takes, end to end, and how much of that is importing graph_lab.

    python3 dev.py bench                       (runs every benchmarks/bench_*.py in .venv)
    PYTHONPATH=. python3 benchmarks/bench_seed_lecture.py [--runs N]

The script (``../shared/seeds/lecture12/01_tracing.py``, a seed document never copied into the repository) is
copied with the project's ``lectures/`` tree into a temporary folder and run N times as a subprocess, as a
student runs it. Each run is a fresh interpreter, so the wall time includes Python's start-up; the baseline
row (``python -c pass``) shows how much that is. The import row is measured inside fresh interpreters, with
``time.perf_counter`` around ``import graph_lab`` (NumPy included, since graph_lab imports it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "lecture12" / "01_tracing.py"
IMPORT_TIMER = "import time; t = time.perf_counter(); import graph_lab; print(time.perf_counter() - t)"


def child_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")


def wall_times(command: list[str], cwd: Path, runs: int) -> list[float]:
    """Seconds each run of ``command`` takes, start to exit; any failure stops the benchmark."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, env=child_env(), capture_output=True, text=True,
                                encoding="utf-8")
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"bench_seed_lecture: {' '.join(command)} failed (exit code {result.returncode}):\n"
                     f"{result.stderr}")
    return times


def import_times(runs: int) -> list[float]:
    """Seconds ``import graph_lab`` takes inside each of ``runs`` fresh interpreters."""
    times = []
    for _ in range(runs):
        result = subprocess.run([sys.executable, "-c", IMPORT_TIMER], env=child_env(), capture_output=True,
                                text=True, check=True)
        times.append(float(result.stdout))
    return times


def milliseconds(times: list[float]) -> list[str]:
    """Median and minimum in milliseconds, always with one decimal (a float cell would print 17.0 as 17)."""
    return [f"{statistics.median(times) * 1e3:.1f}", f"{min(times) * 1e3:.1f}"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each measurement (default 7)")
    runs = parser.parse_args(argv).runs

    if not SEED.is_file():
        print(f"bench_seed_lecture: the course's lecture-12 script is missing: {SEED}\n"
              f"It lives in ../shared/seeds next to the repository (never copied into it); run the benchmark "
              f"inside the course workplace.", file=sys.stderr)
        return 1

    sys.path.insert(0, str(ROOT))
    from graph_lab.console import print_header, print_table  # after the path is set, like the lectures

    with tempfile.TemporaryDirectory(prefix="graph-lab-bench-") as tmp:
        lectures = Path(tmp) / "lectures"
        shutil.copytree(ROOT / "lectures", lectures, ignore=shutil.ignore_patterns("__pycache__"))
        (lectures / "lecture12").mkdir(exist_ok=True)
        shutil.copy(SEED, lectures / "lecture12" / "01_tracing.py")
        wall_times([sys.executable, "01_tracing.py"], lectures / "lecture12", 1)  # warm the file caches
        lecture = wall_times([sys.executable, "01_tracing.py"], lectures / "lecture12", runs)
        baseline = wall_times([sys.executable, "-c", "pass"], Path(tmp), runs)
    imports = import_times(runs)

    print_header(f"lecture 12, 01_tracing.py: wall time over {runs} runs (Python {sys.version.split()[0]})")
    print_table(["measurement", "median ms", "min ms"], [
        ["01_tracing.py, whole script (subprocess)", *milliseconds(lecture)],
        ["import graph_lab (in-process, NumPy included)", *milliseconds(imports)],
        ["python -c pass (interpreter start-up)", *milliseconds(baseline)],
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
