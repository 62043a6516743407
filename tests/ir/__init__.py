"""The IR: building, verifying, printing, parsing, saving, symbolic sizes."""
