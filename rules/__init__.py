"""The rule catalog: one module per rule; the registry finds them by itself."""
