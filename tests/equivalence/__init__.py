"""graph_lab.equivalence, the benchmark corpus checked, the fuzz suites and their regressions."""
