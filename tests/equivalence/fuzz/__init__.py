"""The fuzz suites F1-F8 (``python3 dev.py fuzz``) and CI's sample of them."""
