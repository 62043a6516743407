"""LazyRunner."""
