"""graph_lab.nn and graph_lab.optim."""
