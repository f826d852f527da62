"""open_store's registry of URL schemes, and the Store protocol's two parts (data and admin)."""

from __future__ import annotations

import socket

import pytest

from keyshape.errors import BadInput, StoreError
from keyshape.store import AdminStore, DataStore, EmbeddedStore, Store, open_store, register_scheme
from keyshape.store.schemes import schemes


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket closes


@pytest.mark.parametrize("url", [None, "", "embedded", "embedded://"])
def test_the_embedded_forms_open_a_new_embedded_store(url: str | None) -> None:
    first, second = open_store(url), open_store(url)
    assert isinstance(first, EmbeddedStore) and first is not second


def test_hbase_scheme_and_the_bare_quorum_reach_the_hbase_store() -> None:
    port = _closed_port()
    for url in (f"hbase://127.0.0.1:{port}", f"127.0.0.1:{port}"):
        with pytest.raises(StoreError, match=f"cannot reach ZooKeeper at 127.0.0.1:{port}"):
            open_store(url)


def test_unknown_forms_are_bad_input_naming_the_schemes() -> None:
    for url in ("ftp://host:21", "HBASE://host:2181"):  # schemes are written in lower case
        with pytest.raises(BadInput, match="embedded://, hbase://"):
            open_store(url)
    with pytest.raises(BadInput, match="keeps nothing on disk"):
        open_store("embedded:///tmp/store")
    with pytest.raises(BadInput, match="unknown store 'localhost'"):
        open_store("localhost")


def test_a_registered_scheme_is_opened_with_the_url_and_user() -> None:
    seen: list[tuple[str, str | None]] = []

    class Counted(EmbeddedStore):
        pass

    def opener(url: str, user: str | None) -> Store:
        seen.append((url, user))
        return Counted(servers=3)

    register_scheme("ksh-test", opener)
    try:
        store = open_store("ksh-test://anything?x=1", user="alice")
        assert isinstance(store, Counted) and store.servers == 3
        assert seen == [("ksh-test://anything?x=1", "alice")]
        assert "ksh-test" in schemes()
    finally:
        from keyshape.store import schemes as module

        module._OPENERS.pop("ksh-test", None)
    with pytest.raises(BadInput, match="scheme 'Bad_Scheme'"):
        register_scheme("Bad_Scheme", opener)


def _methods(cls: type) -> set[str]:
    return {n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def test_the_protocol_is_a_data_part_and_an_admin_part() -> None:
    data, admin = _methods(DataStore), _methods(AdminStore)
    assert data & admin == {"close"}
    assert {"put", "writer", "scan", "get_many", "increment"} <= data
    assert {"create_table", "regions", "split_region", "move_region", "region_servers", "set_balancer"} <= admin
    store = EmbeddedStore()
    assert isinstance(store, DataStore) and isinstance(store, AdminStore) and isinstance(store, Store)
    assert issubclass(Store, DataStore) and issubclass(Store, AdminStore)
