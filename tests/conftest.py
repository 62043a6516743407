"""Settings for the whole suite.

Strict capture (``graph_lab.logs.set_strict_capture``): an exception raised by graph_lab's own code while compile()
captures is raised as ``InternalCaptureError`` instead of becoming a graph break, so that no test can pass over a
bug of capture that a break would hide. Set in the environment too, for the programs the tests run as
subprocesses (lectures, docs examples, benchmarks).
"""

import os

os.environ["GRAPH_LAB_STRICT_CAPTURE"] = "1"

import graph_lab.logs  # noqa: E402  (after the variable is set: it is read at import)

graph_lab.logs.set_strict_capture(True)
