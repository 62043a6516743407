"""The op table: every op's samples against eager NumPy, library calls, control-flow ops."""
