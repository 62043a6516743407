"""Developer tasks for graph_lab; needs nothing but python3.

    python3 dev.py demo          run the lecture-12 scripts in order
    python3 dev.py test [ARGS]   run the tests (ARGS go to pytest, e.g. -n 2 to use both cores)
    python3 dev.py bench         run benchmarks/bench_*.py in order
                                 (--peers: first install torch's CPU build and jax, to measure them beside
                                 graph_lab; bench_corpus.py then times torch.compile and jax.jit too)
    python3 dev.py fuzz [ARGS]   run the fuzz suites F1-F8 at their large counts and print the figures
                                 (--quick: CI's samples; --suite F1; --jobs 2; see tests/equivalence/fuzz/run_fuzz.py)

Which Python (every task takes these before its own arguments):

    --python 3.13                run under CPython 3.13 instead of the python3 that runs dev.py
                                 (a path to an interpreter works too)
    --all-pythons                test and demo only: run under each of 3.11, 3.12 and 3.13 that is found, print
                                 one summary line per version, and fail if any run fails
    --all-pythons=required       the same, and a version that is not found fails too (what CI runs)

An interpreter is looked for as pyenv keeps it ($PYENV_ROOT or ~/.pyenv, versions/3.13.N/bin/python3.13, the
newest N first), then as python3.13 on PATH; each candidate is run once to check that it works and is that
version (a pyenv shim of a version that is not selected does not).

Each task first makes sure the interpreter's virtual environment exists and holds the project installed in
editable mode: `.venv` for the python3 that runs dev.py (once made, for the version it holds), `.venv-3.13` for
3.13 when that is another version, and so on; a venv whose Python no longer runs is made again. The install is
redone only when pyproject.toml changes (its hash is kept in a stamp file inside the venv), so a second run
starts at once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LECTURE12 = ROOT / "lectures" / "lecture12"
# The course's own lecture-12 script is a seed document kept outside the repository; the project must
# never contain a copy, so the demo runs it from a temporary copy of the lecture tree.
SEED_SCRIPT = ROOT.parent / "shared" / "seeds" / "lecture12" / "01_tracing.py"
SUPPORTED = ("3.11", "3.12", "3.13")
"""The CPython versions graph_lab supports (pyproject.toml's requires-python, docs/python_versions.md)."""
STAMP_NAME = "graph-lab-install.stamp"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""Where the CPU build of torch is (``torch==2.13.0+cpu`` matches the extra's ``torch==2.13.0`` and sorts above it):
PyPI's Linux torch wheel is the CUDA build, gigabytes of CUDA libraries the benchmarks never use."""


def step(message: str) -> None:
    print(f"==> {message}", flush=True)


# --- finding interpreters ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interpreter:
    executable: Path
    version: str
    """The full version it reports, like "3.13.0"."""

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def running_interpreter() -> Interpreter:
    return Interpreter(Path(sys.executable), platform.python_version())


def probe(executable: Path | str) -> str | None:
    """The version an interpreter reports, or None if it does not run."""
    try:
        result = subprocess.run([str(executable), "-c", "import platform; print(platform.python_version())"],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def candidates(minor: str) -> list[Path]:
    """Where CPython ``minor`` ("3.13") may be, in the order they are tried."""
    found = []
    running = running_interpreter()
    if running.minor == minor:
        found.append(running.executable)
    releases = [d for d in (pyenv_root() / "versions").glob(f"{minor}.*")
                if re.fullmatch(re.escape(minor) + r"\.\d+", d.name)]  # (not 3.13.0t, 3.13-dev, ...)
    releases.sort(key=lambda d: int(d.name.rsplit(".", 1)[1]), reverse=True)
    found += [d / "bin" / f"python{minor}" for d in releases]
    on_path = shutil.which(f"python{minor}")
    if on_path:
        found.append(Path(on_path))
    return found


def find_python(wanted: str) -> Interpreter | None:
    """The interpreter for ``wanted``: a version ("3.13") or a path or command name of an interpreter."""
    if not re.fullmatch(r"\d+\.\d+", wanted):
        executable = shutil.which(wanted) or wanted
        version = probe(executable)
        return Interpreter(Path(executable).absolute(), version) if version else None
    for executable in candidates(wanted):
        if executable.exists():
            version = probe(executable)
            if version and version.startswith(wanted + "."):
                return Interpreter(executable, version)
    return None


def where_looked(minor: str) -> str:
    return f"{pyenv_root()}/versions/{minor}.*/bin/python{minor}, python{minor} on PATH"


@dataclass
class Choice:
    """What the --python / --all-pythons options asked for."""
    interpreters: list[Interpreter]
    """The interpreters to run the task under, in version order."""
    missing: list[str]
    """The supported versions (X.Y) that --all-pythons did not find."""
    required: bool
    """A missing version fails the task (--all-pythons=required)."""
    several: bool
    """--all-pythons: print one summary line per version."""


def choose_pythons(args: list[str], allow_all: bool) -> tuple[Choice, list[str]]:
    """Take the interpreter options out of ``args``; return what they chose and the remaining arguments."""
    rest, wanted, every, required = [], None, False, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--python" and i + 1 < len(args):
            wanted, i = args[i + 1], i + 2
            continue
        if arg.startswith("--python="):
            wanted = arg.split("=", 1)[1]
        elif arg in ("--all-pythons", "--all-pythons=required"):
            if not allow_all:
                sys.exit(f"dev.py: {arg} is for the test and demo tasks only")
            every, required = True, arg.endswith("=required")
        else:
            rest.append(arg)
        i += 1
    if every:
        if wanted:
            sys.exit("dev.py: --python and --all-pythons do not go together")
        found = {minor: find_python(minor) for minor in SUPPORTED}
        return Choice([p for p in found.values() if p], [m for m, p in found.items() if p is None],
                      required, True), rest
    if wanted is None:
        return Choice([running_interpreter()], [], True, False), rest
    interpreter = find_python(wanted)
    if interpreter is None:
        looked = where_looked(wanted) if re.fullmatch(r"\d+\.\d+", wanted) else wanted
        sys.exit(f"dev.py: no working Python {wanted} found (looked at {looked}); install it, e.g. "
                 f"`pyenv install {wanted}`, or pass the interpreter's path")
    if tuple(int(n) for n in interpreter.minor.split(".")) < (3, 11):
        sys.exit(f"dev.py: graph_lab needs Python 3.11 or newer (pyproject.toml's requires-python); "
                 f"{interpreter.executable} is Python {interpreter.version}")
    return Choice([interpreter], [], True, False), rest


# --- virtual environments ---------------------------------------------------------------------------------


def venv_folder(interpreter: Interpreter) -> Path:
    """`.venv` for the version it already holds, or when new for the python3 running dev.py; `.venv-3.13` for any
    other version. (So a benchmark run from `.venv-3.13` that asks for 3.11 finds `.venv`, and a new default
    python3 gets its own venv instead of replacing the one of another version.)"""
    default = ROOT / ".venv"
    held = default_venv_version()
    if held == interpreter.minor or held is None and interpreter.minor == running_interpreter().minor:
        return default
    return ROOT / f".venv-{interpreter.minor}"


@functools.lru_cache(maxsize=None)
def default_venv_version() -> str | None:
    """The X.Y of the Python in `.venv`, or None if there is no working one."""
    version = probe(venv_python(ROOT / ".venv")) if venv_python(ROOT / ".venv").exists() else None
    return ".".join(version.split(".")[:2]) if version else None


def venv_python(folder: Path) -> Path:
    if os.name == "nt":
        return folder / "Scripts" / "python.exe"
    return folder / "bin" / "python"


def ensure_venv(target: str, interpreter: Interpreter | None = None) -> Path:
    """Create the interpreter's venv if needed and `pip install -e <target>` unless the stamp says it is current;
    return the venv's python.

    `target` is "." or ".[test]". The stamp holds one "<hash of pyproject.toml> <target>" line per
    installed target; a changed pyproject.toml makes every line stale.
    """
    interpreter = interpreter or running_interpreter()
    folder = venv_folder(interpreter)
    python = venv_python(folder)
    if python.exists() and not (probe(python) or "").startswith(interpreter.minor + "."):
        step(f"{folder.name} does not hold a working Python {interpreter.minor}; making it again")
        shutil.rmtree(folder)
        default_venv_version.cache_clear()
    stamp = folder / STAMP_NAME
    if not python.exists():
        step(f"creating {folder.name} with {interpreter.executable} (Python {interpreter.version})")
        result = subprocess.run([str(interpreter.executable), "-m", "venv", str(folder)])
        if result.returncode != 0:
            sys.exit("dev.py: could not create the virtual environment "
                     "(on Debian/Ubuntu: apt-get install python3-venv)")

    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = f"{digest} {target}"
    installed = stamp.read_text().splitlines() if stamp.exists() else []
    if wanted in installed:
        return python

    index = ["--extra-index-url", TORCH_CPU_INDEX] if "peers" in target else []
    step(f"installing graph-lab into {folder.name}: pip install {' '.join(index + ['-e', target])}")
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *index,
                             "-e", target], cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"dev.py: pip install -e {target} into {folder.name} failed (exit code {result.returncode})")
    still_valid = [line for line in installed if line.startswith(digest + " ")]
    if target != ".":
        still_valid.append(f"{digest} .")  # an install with extras includes the plain one
    stamp.write_text("\n".join(sorted(set(still_valid + [wanted]))) + "\n")
    return python


# --- tasks ----------------------------------------------------------------------------------------------------


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


def run_demo(python: Path) -> int:
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


def demo(args: list[str]) -> int:
    choice, rest = choose_pythons(args, allow_all=True)
    if rest:
        print(f"dev.py demo: unknown arguments {rest}", file=sys.stderr)
        return 2
    lines, failed = [], False
    for interpreter in choice.interpreters:
        if choice.several:
            step(f"demo under Python {interpreter.version}")
        start = time.monotonic()
        code = run_demo(ensure_venv(".", interpreter))
        failed = failed or code != 0
        lines.append(f"python {interpreter.version}: demo {'passed' if code == 0 else 'failed'} "
                     f"in {time.monotonic() - start:.0f} s")
    return finish_versions(choice, lines, failed)


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


COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


def closing_counts(line: str) -> dict[str, int] | None:
    """The counts of pytest's closing line ("3 failed, 9233 passed, 1 error in 88.57s"), or None for any other
    line; "errors" is counted as "error"."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
    if not re.search(r" in [\d.]+s\b", plain):
        return None
    found = {("error" if kind.startswith("error") else kind): int(n) for n, kind in COUNT.findall(plain)}
    return found or None


def run_pytest(python: Path, args: list[str]) -> tuple[int, dict[str, int]]:
    """Run pytest, its output passed through; return its exit code and the counts of its closing line."""
    if sys.stdout.isatty() and not any(a.startswith("--color") for a in args):
        args = ["--color=yes", *args]  # (its output goes through a pipe to this terminal)
    step(" ".join(["python -m pytest -q", *args]))
    process = subprocess.Popen([str(python), "-m", "pytest", "-q", *args], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
    counts: dict[str, int] = {}
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        counts = closing_counts(line) or counts
    return process.wait(), counts


def test(args: list[str]) -> int:
    choice, rest = choose_pythons(args, allow_all=True)
    ensure_chromium()
    lines, failed, total = [], False, dict.fromkeys(("passed", "failed", "skipped"), 0)
    for interpreter in choice.interpreters:
        python = ensure_venv(".[test]", interpreter)
        start = time.monotonic()
        code, counts = run_pytest(python, rest)
        if code == 5:  # pytest's "no tests collected": a test run that tested nothing must not pass
            print("dev.py: pytest collected no tests; treating that as a failure", file=sys.stderr)
        failed = failed or code != 0
        for kind in total:
            total[kind] += counts.get(kind, 0) + (counts.get("error", 0) if kind == "failed" else 0)
        lines.append(f"python {interpreter.version}: {counts.get('passed', 0)} passed, {counts.get('failed', 0)} "
                     f"failed, {counts.get('error', 0)} errors, {counts.get('skipped', 0)} skipped "
                     f"in {time.monotonic() - start:.0f} s (exit code {code}, {venv_folder(interpreter).name})")
    if choice.several:
        lines.append(f"total: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return finish_versions(choice, lines, failed)


def finish_versions(choice: Choice, lines: list[str], failed: bool) -> int:
    """Print one line per version run (and per version missing); 0 only if every run passed."""
    missing = [f"python {minor}: not found (looked at {where_looked(minor)})" for minor in choice.missing]
    if choice.several:
        by_version = sorted(missing + lines[:len(choice.interpreters)], key=version_key)
        print("\n" + "\n".join(by_version + lines[len(choice.interpreters):]), flush=True)
    if choice.several and not choice.interpreters:
        print("dev.py: none of the supported Python versions was found", file=sys.stderr)
        return 1
    if choice.missing and choice.required:
        print(f"dev.py: Python {', '.join(choice.missing)} not found, and every supported version is required",
              file=sys.stderr)
        return 1
    return 1 if failed else 0


def version_key(line: str) -> tuple[int, ...]:
    """Orders "python 3.12.1: ..." lines by version."""
    return tuple(int(n) for n in re.match(r"python ([\d.]+)", line).group(1).split("."))


def bench(args: list[str]) -> int:
    choice, rest = choose_pythons(args, allow_all=False)
    folder = ROOT / "benchmarks"
    if not folder.is_dir():
        print("dev.py: no benchmarks/ folder; nothing to run")
        return 0
    unknown = [a for a in rest if a != "--peers"]
    if unknown:
        print(f"dev.py bench: unknown arguments {unknown} (it takes only --peers and --python)", file=sys.stderr)
        return 2
    python = ensure_venv(".[peers]" if "--peers" in rest else ".", choice.interpreters[0])
    # OpenBLAS reads these to pretend to be another CPU (some environments set them); the benchmarks measure this
    # machine as it is, so they are dropped for the benchmark processes only, never for the tests.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    if "--peers" in rest:
        env["GRAPH_LAB_BENCH_PEERS"] = "1"  # (bench_corpus.py: time torch.compile and jax.jit beside compile())
    return run_scripts(python, sorted(folder.glob("bench_*.py")), env)


def fuzz(args: list[str]) -> int:
    choice, rest = choose_pythons(args, allow_all=False)
    python = ensure_venv(".", choice.interpreters[0])
    module = "tests.equivalence.fuzz.run_fuzz"  # (run as a module: the suites import each other as tests.*)
    step(" ".join(["python -m", module, *rest]))
    return subprocess.run([str(python), "-m", module, *rest], cwd=ROOT).returncode


COMMANDS = {"demo": demo, "test": test, "bench": bench, "fuzz": fuzz}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
