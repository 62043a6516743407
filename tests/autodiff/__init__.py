"""graph_lab.autodiff."""
