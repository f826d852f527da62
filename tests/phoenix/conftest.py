"""Fixtures of the Phoenix tests: the connectionless Phoenix JVM and the live Phoenix-enabled
HBase, each started once per session."""

from phoenix_fixture import connectionless_oracle, phoenix_url  # noqa: F401  (session fixtures)
