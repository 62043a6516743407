"""``python -m graph_lab ...``: the same command line as the ``graph-lab`` script (``graph_lab/cli.py``)."""

import sys

from .cli import main

sys.exit(main())
