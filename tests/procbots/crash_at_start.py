"""Dies of an exception before reading anything, like a bot with a bug at startup."""
1 / 0  # noqa: B018
