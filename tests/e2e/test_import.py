"""``import graph_lab`` stays light: only the standard library and NumPy, and well under a second."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, sys, time
before = set(sys.modules)
start = time.process_time()  # CPU time: a loaded machine does not inflate it
import graph_lab
seconds = time.process_time() - start
added = sorted({name.split(".")[0] for name in set(sys.modules) - before})
print(json.dumps({"file": graph_lab.__file__, "seconds": seconds, "added": added,
                  "stdlib": sorted(sys.stdlib_module_names)}))
"""


def import_in_fresh_interpreter() -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def third_party(added: list[str], stdlib: set[str]) -> list[str]:
    return [m for m in added if m not in stdlib and m not in ("numpy", "graph_lab", "__main__")]


def test_import_uses_only_stdlib_and_numpy_and_is_fast():
    info = import_in_fresh_interpreter()
    assert Path(info["file"]).resolve().is_relative_to(REPO / "graph_lab")  # this checkout's graph_lab
    assert "graph_lab" in info["added"] and "numpy" in info["added"]
    assert third_party(info["added"], set(info["stdlib"])) == []
    assert info["seconds"] < 2.0, f"import graph_lab took {info['seconds']:.2f} s of CPU time"


def test_third_party_filter_catches_an_extra_module():
    stdlib = {"os", "sys", "json"}
    assert third_party(["os", "numpy", "graph_lab", "scipy", "_distutils_hack"], stdlib) == \
        ["scipy", "_distutils_hack"]
