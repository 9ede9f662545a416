"""Shared test helpers: import as `from helpers.<module> import ...`."""
