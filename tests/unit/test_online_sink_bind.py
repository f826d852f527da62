"""``migrate --online --sink-bind`` (issue 39 item 14): the address asked for is bound exactly or
refused in one line that names it, before the cluster is touched; only a resumed run's remembered
port may give way to a free one. (The refusal through the CLI, with nothing changed in HBase, is
in tests/hbase/test_migrate_online.py.)"""

from __future__ import annotations

import socket

import pytest

from keyshape.errors import BadInput
from keyshape.ops.migrate_online import _bind_sink, _sink_address


def nothing(entries: object) -> None:
    return None


def test_a_port_in_use_is_refused_not_swapped() -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        with pytest.raises(BadInput, match=f"port {port} is in use") as refused:
            _bind_sink(nothing, "127.0.0.1", port, explicit=True)  # type: ignore[arg-type]
        assert "\n" not in str(refused.value)
        # a resumed run's remembered port is a preference only: any free one
        sink = _bind_sink(nothing, "127.0.0.1", port, explicit=False)  # type: ignore[arg-type]
        try:
            assert sink.port not in (0, port)
        finally:
            sink.stop()


def test_an_unresolvable_host_is_named() -> None:
    with pytest.raises(BadInput, match="host 'no-such-host.invalid' does not resolve"):
        _bind_sink(nothing, "no-such-host.invalid", 16999, explicit=True)  # type: ignore[arg-type]


def test_the_address_asked_for_is_the_one_bound() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    host, wanted = _sink_address("127.0.0.1:2181", f"127.0.0.1:{port}", {"sink_host": "10.0.0.9", "sink_port": 1})
    assert (host, wanted) == ("127.0.0.1", port)
    sink = _bind_sink(nothing, host, wanted, explicit=True)  # type: ignore[arg-type]
    try:
        assert (sink.host, sink.port) == ("127.0.0.1", port)
    finally:
        sink.stop()
    for bad in ("nohostport", "host:", "host:99999", ":5"):
        with pytest.raises(BadInput, match="want HOST:PORT"):
            _sink_address("127.0.0.1:2181", bad, {})
