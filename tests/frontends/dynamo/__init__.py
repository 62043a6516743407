"""compile(): bytecode capture, guards, graph breaks, writes into the caller's arrays."""
