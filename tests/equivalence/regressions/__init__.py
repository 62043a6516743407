"""Every bug the fuzzer found, kept as a test."""
