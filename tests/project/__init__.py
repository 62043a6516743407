"""The project's own rules: layering, module budgets, typing, generated pages not stale."""
