"""trace()."""
