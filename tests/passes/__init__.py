"""The passes and the pass manager."""
