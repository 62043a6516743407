"""Compiling generated C with the system compiler, caching the libraries on disk, and loading them with ctypes.

Flags: ``-O3 -fno-math-errno -ffp-contract=off -fopenmp-simd``, plus ``-mavx2 -mfma`` when the CPU has both,
and the AVX-512 flags (``AVX512_FLAGS``) when it has those too (read from ``/proc/cpuinfo``; otherwise the
compiler's baseline x86-64 code). No global ``-ffast-math``: IEEE
semantics hold, so arithmetic is bit for bit NumPy's; ``-ffp-contract=off`` stops GCC from fusing ``a * b + c``
into one FMA (one rounding instead of NumPy's two). ``-fopenmp-simd`` makes ``#pragma omp simd`` loops and
``declare simd`` prototypes count, which is how ``tanhf`` becomes a call into glibc's vector math library
(``-lmvec``). Without libmvec the same source links to scalar libm.

The cache is one folder per user (``~/.cache/graph_lab/kernels-<uid>``, or the folder given), mode 0700. A
library is named by the SHA-256 of its source, flags and compiler version, and written with a sidecar holding the
SHA-256 of its bytes. A library is loaded only if both files are regular files owned by this user, writable by
nobody else, in a folder that is the same, and the bytes hash to the sidecar: a file this code did not write is
never loaded (it is rebuilt instead). A folder that fails the checks is not used at all.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .c_kernels import CKernel, library_source

BASE_FLAGS = ("-O3", "-fno-math-errno", "-ffp-contract=off", "-fopenmp-simd", "-fPIC", "-shared")
AVX2_FLAGS = ("-mavx2", "-mfma")
AVX512_FLAGS = ("-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mprefer-vector-width=512")
"""With AVX-512, loops run 16 floats at a time and call libmvec's 16-wide functions (``_ZGVeN16v_tanhf``):
measured on the course machine, a GELU kernel over 2M float32 took 1.0 ms against 2.2 ms with AVX2 alone."""


def vector_flags(cpu: set[str]) -> tuple[str, ...]:
    """The instruction-set flags for this CPU, named one by one (never ``-march=native``: the kernel cache is
    keyed by the flags, so a cache shared with another machine cannot hand it code its CPU lacks)."""
    if not {"avx2", "fma"} <= cpu:
        return ()
    if {"avx512f", "avx512dq", "avx512vl", "avx512bw"} <= cpu:
        return AVX2_FLAGS + AVX512_FLAGS
    return AVX2_FLAGS


class KernelBuildError(RuntimeError):
    """The C compiler failed on a generated kernel, or the cache could not be used."""


@dataclass(frozen=True)
class Toolchain:
    """A C compiler and how it is called."""

    compiler: str
    """Absolute path of the compiler."""
    flags: tuple[str, ...]
    vector_math: bool
    """True when kernels link glibc's libmvec (vector ``tanhf``, ``expf``, ...)."""
    version: str
    """The compiler's version (part of every library's hash)."""

    @property
    def libraries(self) -> tuple[str, ...]:
        return ("-lmvec", "-lm") if self.vector_math else ("-lm",)

    def describe(self) -> str:
        return (f"{self.version} {' '.join(self.flags)} {' '.join(self.libraries)}"
                + ("" if self.vector_math else " (no libmvec: scalar libm)"))


def cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where that file does not exist)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def find_toolchain(compiler: str | None = None) -> Toolchain | None:
    """The compiler named (a path or a command), else ``gcc`` or ``cc`` from PATH; None when there is none."""
    candidates = [compiler] if compiler else ["gcc", "cc"]
    for name in candidates:
        path = shutil.which(name)
        if path is None:
            continue
        try:
            result = subprocess.run([path, "-dumpfullversion", "-dumpversion"], capture_output=True, text=True,
                                    timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode != 0:
            continue
        version = f"{Path(path).name} {result.stdout.strip()}"
        flags = BASE_FLAGS + vector_flags(cpu_flags())
        return Toolchain(path, flags, ctypes.util.find_library("mvec") is not None, version)
    return None


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graph_lab" / f"kernels-{os.getuid()}"


def private_dir(path: Path) -> Path:
    """``path`` as a folder only this user can use: made 0700 if missing, refused if anyone else could write it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise KernelBuildError(f"kernel cache {path} is not a folder (a symbolic link?)")
    if info.st_uid != os.getuid():
        raise KernelBuildError(f"kernel cache {path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)  # ours, but opened up: close it before trusting anything in it
        if os.lstat(path).st_mode & 0o077:
            raise KernelBuildError(f"kernel cache {path} cannot be made private (mode 0700)")
    return path


def _trusted_file(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


class KernelCache:
    """Compiled libraries on disk, and the kernel functions already loaded in this process."""

    def __init__(self, toolchain: Toolchain, folder: Path | None = None):
        self.toolchain = toolchain
        self.folder = private_dir(Path(folder) if folder is not None else default_cache_dir())
        self.loaded: dict[str, ctypes._CFuncPtr] = {}
        """Kernel name -> its function, for every kernel loaded by this cache."""
        self.builds = 0
        """Libraries compiled by this process (a test checks that a second run compiles nothing)."""
        self.hits = 0
        """Libraries found on disk and loaded."""

    def functions(self, kernels: list[CKernel]) -> dict[str, ctypes._CFuncPtr]:
        """The loaded function of every kernel; the ones not loaded yet are compiled together, as one library."""
        missing = {k.name: k for k in kernels if k.name not in self.loaded}
        if missing:
            library = self._library(list(missing.values()))
            for k in missing.values():
                fn = getattr(library, k.name)
                fn.argtypes = ([ctypes.c_int64] * (3 if k.two_d else 2)
                               + [ctypes.c_void_p] * (k.n_inputs + k.n_outputs))
                fn.restype = None
                self.loaded[k.name] = fn
        return {k.name: self.loaded[k.name] for k in kernels}

    def _library(self, kernels: list[CKernel]) -> ctypes.CDLL:
        source = library_source(kernels)
        key = hashlib.sha256("\n".join([self.toolchain.version, *self.toolchain.flags,
                                        *self.toolchain.libraries, source]).encode()).hexdigest()[:32]
        so, sidecar = self.folder / f"lib{key}.so", self.folder / f"lib{key}.sha256"
        if _trusted_file(so) and _trusted_file(sidecar):
            data = so.read_bytes()
            if hashlib.sha256(data).hexdigest() == sidecar.read_text().strip():
                self.hits += 1
                return ctypes.CDLL(str(so))
        self._build(source, so, sidecar)
        self.builds += 1
        return ctypes.CDLL(str(so))

    def _build(self, source: str, so: Path, sidecar: Path) -> None:
        with tempfile.TemporaryDirectory(dir=self.folder, prefix="build-") as tmp:
            c_file, out = Path(tmp) / "kernels.c", Path(tmp) / "kernels.so"
            c_file.write_text(source)
            command = [self.toolchain.compiler, *self.toolchain.flags, str(c_file), "-o", str(out),
                       *self.toolchain.libraries]
            result = subprocess.run(command, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                raise KernelBuildError(f"{' '.join(command)} failed:\n{result.stderr[-4000:]}")
            digest = hashlib.sha256(out.read_bytes()).hexdigest()
            os.chmod(out, 0o600)
            (Path(tmp) / "digest").write_text(digest + "\n")
            os.replace(out, so)
            os.replace(Path(tmp) / "digest", sidecar)
