"""HFile block compression as HBase's codecs frame it (keyshape.store.hbase.compression): round
trips (hypothesis), the Hadoop BlockCompressorStream framing checked against bytes HBase 2.6.4's
own codecs wrote, and the one-line refusals. (HBase reads these blocks in
tests/hbase/test_bulkload_compression.py.)"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import BadInput, StoreError
from keyshape.store.hbase.compression import (
    MAX_INPUT,
    ORDINALS,
    WRITABLE,
    check_line,
    check_writable,
    compress_block,
    decompress_block,
    name_of,
)

FRAMED = ["SNAPPY", "LZ4", "ZSTD"]
SMALL = b"keyshape keyshape keyshape!"

# What HBase 2.6.4's classpath wrote for SMALL (codec.createOutputStream(out, createCompressor()),
# write, flush, finish: as HFileBlockDefaultEncodingContext does), printed once by a throwaway Java
# program against tools/hbase/lines/2.6.4/lib. Hadoop 3.4's SnappyCodec (snappy-java) and HBase's
# aircompressor SnappyCodec wrote the same bytes.
JAVA = {
    "SNAPPY": "0000001b000000101b206b65797368617065204209000021",
    "LZ4": "0000001b00000012996b65797368617065200900506861706521",  # aircompressor Lz4Codec
    "ZSTD": "0000001b0000001d28b52ffd241b850000506b65797368617065202101009ccb1144a2df7a",  # aircompressor ZstdCodec (with a frame checksum)
}


def test_ordinals_are_compression_algorithms() -> None:
    # Compression.Algorithm's declaration order (hbase-common 2.4.18 .. 2.6.4)
    assert list(ORDINALS) == ["LZO", "GZ", "NONE", "SNAPPY", "LZ4", "BZIP2", "ZSTD", "LZMA", "BROTLI"]
    assert list(ORDINALS.values()) == list(range(9))
    assert all(name_of(ORDINALS[n]) == n for n in ORDINALS)
    with pytest.raises(StoreError):
        name_of(42)


@pytest.mark.parametrize("name", FRAMED)
def test_hbase_codecs_bytes_decompress(name: str) -> None:
    assert decompress_block(name, bytes.fromhex(JAVA[name]), len(SMALL)) == SMALL


@pytest.mark.parametrize("name", ["SNAPPY", "LZ4"])
def test_small_block_is_byte_for_byte_what_hbase_writes(name: str) -> None:
    assert compress_block(name, SMALL).hex() == JAVA[name]


@pytest.mark.parametrize("name", FRAMED)
def test_empty_block_is_the_length_zero_alone(name: str) -> None:
    # BlockCompressorStream.finish of nothing (the meta index block): HBase writes 00000000
    assert compress_block(name, b"") == b"\x00\x00\x00\x00"
    assert decompress_block(name, b"\x00\x00\x00\x00", 0) == b""


@pytest.mark.parametrize("name", FRAMED)
def test_a_block_larger_than_one_segment_is_cut_as_block_compressor_stream_cuts_it(name: str) -> None:
    data = bytes((i * 7) % 251 for i in range(MAX_INPUT + 100))
    payload = compress_block(name, data)
    # one length for the whole block, then a chunk per segment of MAX_INPUT (218422) bytes
    assert MAX_INPUT == 218422
    (total, first) = struct.unpack_from(">ii", payload, 0)
    assert total == len(data)
    (second,) = struct.unpack_from(">i", payload, 8 + first)
    assert 8 + first + 4 + second == len(payload)
    assert decompress_block(name, payload, len(data)) == data
    # each chunk decompresses on its own to its segment (the reader's 256 KiB buffer holds it)
    one = struct.pack(">ii", MAX_INPUT, first) + payload[8 : 8 + first]
    assert decompress_block(name, one, MAX_INPUT) == data[:MAX_INPUT]


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(list(WRITABLE)), data=st.one_of(st.binary(max_size=3000), st.binary(max_size=40).map(lambda b: b * 500)))
def test_round_trip(name: str, data: bytes) -> None:
    assert decompress_block(name, compress_block(name, data), len(data)) == data


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(FRAMED), data=st.binary(min_size=1, max_size=500), cut=st.integers(1, 8))
def test_a_truncated_or_foreign_payload_is_a_store_error_not_garbage(name: str, data: bytes, cut: int) -> None:
    payload = compress_block(name, data)
    with pytest.raises(StoreError):
        decompress_block(name, payload[:-cut], len(data))
    with pytest.raises(StoreError):  # a bare stream (Hadoop's ZStandardCodec) is not block framing
        decompress_block(name, payload[8:], len(data))


def test_wrong_size_in_the_header_is_refused() -> None:
    with pytest.raises(StoreError, match="header says 28"):
        decompress_block("SNAPPY", compress_block("SNAPPY", SMALL), len(SMALL) + 1)


@pytest.mark.parametrize("name", ["LZO", "BZIP2", "LZMA", "BROTLI", "SNAPPY2"])
def test_what_is_not_written_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(BadInput) as e:
        check_writable("d", name)
    text = str(e.value)
    assert "\n" not in text and f"family 'd' of the new table uses COMPRESSION {name}" in text and "--via puts" in text
    with pytest.raises(BadInput):
        compress_block(name, b"x")


@pytest.mark.parametrize("name", WRITABLE)
def test_writable_names_pass(name: str) -> None:
    assert check_writable("d", name.lower()) == name


@pytest.mark.parametrize("version", ["2.4.18", "2.4.0", "2.3.7", "1.7.2"])
def test_zstd_on_a_line_that_reads_it_as_a_bare_stream_is_refused_in_one_line(version: str) -> None:
    with pytest.raises(BadInput) as e:
        check_line("d", "ZSTD", version)
    text = str(e.value)
    assert "\n" not in text and "family 'd' of the new table uses COMPRESSION ZSTD" in text and f"HBase {version}" in text and "--via puts" in text


@pytest.mark.parametrize(
    ("compression", "version"), [("ZSTD", "2.5.11-hadoop3"), ("ZSTD", "2.6.4"), ("ZSTD", "3.0.0-beta-1"), ("SNAPPY", "2.4.18"), ("LZ4", "2.4.18")]
)
def test_what_a_line_reads_as_written_passes(compression: str, version: str) -> None:
    check_line("d", compression, version)
