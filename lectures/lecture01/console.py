"""The course's console module (lecture 1 onward): a thin re-export of graph_lab.console.

Course scripts put this folder on sys.path and `from console import ...`; the code lives in graph_lab so
that the library, its CLI and the lectures print the same way.
"""

from graph_lab.console import print_header, print_observations, print_table

__all__ = ["print_header", "print_table", "print_observations"]
