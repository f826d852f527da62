"""The browser tests' Chromium: one real headless Chromium (Debian's package, tests/chromium.py)
per test module that asks for ``browser`` (imported by tests/conftest.py: a second conftest.py
would clash with it under --doctest-modules, "import file mismatch")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chromium import Chromium, chromium_path

NO_CHROMIUM = "no Chromium to run the browser tests: apt-get install -y chromium (.ci/run installs it), or set KEYSHAPE_CHROMIUM to a Chrome binary"


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    binary = chromium_path()
    if binary is None:
        pytest.skip(NO_CHROMIUM)
    c = Chromium(binary)
    try:
        yield c
    finally:
        c.close()
