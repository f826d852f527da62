"""Fixtures of the Phoenix tests: the connectionless Phoenix JVM, started once per session."""

from phoenix_fixture import connectionless_oracle  # noqa: F401  (session fixture)
