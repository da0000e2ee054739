"""strkit, rebuilt from its manual: a small text toolkit."""
