"""Developer tasks for graph_lab; needs nothing but python3.

    python3 dev.py demo          run the lecture-12 scripts in order
    python3 dev.py test [ARGS]   run the tests (ARGS go to pytest)
    python3 dev.py bench         run benchmarks/bench_*.py in order
                                 (--peers: first install torch and jax, to measure them beside graph_lab)
    python3 dev.py fuzz [ARGS]   run the fuzz suites F1-F8 at their large counts and print the figures
                                 (--quick: CI's samples; --suite F1; --jobs 2; see tests/fuzz/run_fuzz.py)

Each task first makes sure `.venv` exists and holds the project installed in editable mode. The install
is redone only when pyproject.toml changes (its hash is kept in a stamp file inside .venv), so a second
run starts at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / "graph-lab-install.stamp"
LECTURE12 = ROOT / "lectures" / "lecture12"
# The course's own lecture-12 script is a seed document kept outside the repository; the project must
# never contain a copy, so the demo runs it from a temporary copy of the lecture tree.
SEED_SCRIPT = ROOT.parent / "shared" / "seeds" / "lecture12" / "01_tracing.py"


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


def venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def ensure_venv(target: str) -> Path:
    """Create .venv if needed and `pip install -e <target>` unless the stamp says it is current.

    `target` is "." or ".[test]". The stamp holds one "<hash of pyproject.toml> <target>" line per
    installed target; a changed pyproject.toml makes every line stale.
    """
    python = venv_python()
    if not python.exists():
        step(f"creating {VENV.name} with {sys.executable}")
        result = subprocess.run([sys.executable, "-m", "venv", str(VENV)])
        if result.returncode != 0:
            sys.exit("dev.py: could not create the virtual environment "
                     "(on Debian/Ubuntu: apt-get install python3-venv)")

    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = f"{digest} {target}"
    installed = STAMP.read_text().splitlines() if STAMP.exists() else []
    if wanted in installed:
        return python

    step(f"installing graph-lab into {VENV.name}: pip install -e {target}")
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                             "-e", target], cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"dev.py: pip install -e {target} failed (exit code {result.returncode})")
    still_valid = [line for line in installed if line.startswith(digest + " ")]
    if target != ".":
        still_valid.append(f"{digest} .")  # an install with extras includes the plain one
    STAMP.write_text("\n".join(sorted(set(still_valid + [wanted]))) + "\n")
    return python


def run_scripts(python: Path, scripts: list[Path], env: dict[str, str] | None = None) -> int:
    """Run each script from its own folder, stopping at the first that fails."""
    for script in scripts:
        step(f"running {script.parent.name}/{script.name}")
        result = subprocess.run([str(python), script.name], cwd=script.parent, env=env)
        if result.returncode != 0:
            print(f"dev.py: {script.name} failed (exit code {result.returncode})", file=sys.stderr)
            return result.returncode
    return 0


def lecture_scripts(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]_*.py"))


def demo(args: list[str]) -> int:
    python = ensure_venv(".")
    seed_needed = SEED_SCRIPT.exists() and not (LECTURE12 / "01_tracing.py").exists()
    if seed_needed:
        with tempfile.TemporaryDirectory(prefix="graph-lab-demo-") as tmp:
            lectures = Path(tmp) / "lectures"
            if (ROOT / "lectures").exists():
                shutil.copytree(ROOT / "lectures", lectures,
                                ignore=shutil.ignore_patterns("__pycache__"))
            (lectures / "lecture12").mkdir(parents=True, exist_ok=True)
            shutil.copy(SEED_SCRIPT, lectures / "lecture12" / "01_tracing.py")
            step(f"running the lecture scripts from a copy with the course's 01_tracing.py: {tmp}")
            return run_scripts(python, lecture_scripts(lectures / "lecture12"))

    scripts = lecture_scripts(LECTURE12)
    if scripts:
        return run_scripts(python, scripts)
    tour = ROOT / "examples" / "tour.py"
    if tour.exists():
        return run_scripts(python, [tour])
    print("dev.py: nothing to run: no lectures/lecture12/NN_*.py and no examples/tour.py", file=sys.stderr)
    return 1


def ensure_chromium() -> None:
    """The viewer's test renders pages in headless Chromium (Debian's package); install it where we can."""
    if shutil.which("chromium"):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        step("apt-get install chromium (for the viewer's render test)")
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=False)
    else:
        print("dev.py: chromium is not installed; the viewer's render test will fail. Install Debian's "
              "'chromium' package (apt-get install chromium)", file=sys.stderr)


def test(args: list[str]) -> int:
    ensure_chromium()
    python = ensure_venv(".[test]")
    step(" ".join(["python -m pytest -q", *args]))
    code = subprocess.run([str(python), "-m", "pytest", "-q", *args], cwd=ROOT).returncode
    if code == 5:  # pytest's "no tests collected": a test run that tested nothing must not pass
        print("dev.py: pytest collected no tests; treating that as a failure", file=sys.stderr)
        return 1
    return code


def bench(args: list[str]) -> int:
    folder = ROOT / "benchmarks"
    if not folder.is_dir():
        print("dev.py: no benchmarks/ folder; nothing to run")
        return 0
    unknown = [a for a in args if a != "--peers"]
    if unknown:
        print(f"dev.py bench: unknown arguments {unknown} (it takes only --peers)", file=sys.stderr)
        return 2
    python = ensure_venv(".[peers]" if "--peers" in args else ".")
    # OpenBLAS reads these to pretend to be another CPU (some environments set them); the benchmarks measure this
    # machine as it is, so they are dropped for the benchmark processes only, never for the tests.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    return run_scripts(python, sorted(folder.glob("bench_*.py")), env)


def fuzz(args: list[str]) -> int:
    python = ensure_venv(".")
    script = ROOT / "tests" / "fuzz" / "run_fuzz.py"
    step(" ".join(["python", str(script.relative_to(ROOT)), *args]))
    return subprocess.run([str(python), str(script), *args], cwd=ROOT).returncode


COMMANDS = {"demo": demo, "test": test, "bench": bench, "fuzz": fuzz}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
