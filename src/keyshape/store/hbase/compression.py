"""The compression of HFile blocks as HBase's region servers read it: one block's payload
compressed and decompressed per ``Compression.Algorithm``, and the one-line refusal of what the
bulk copy cannot write exactly.

HBase compresses each block's payload (the 33-byte header stays uncompressed) through the codec
class its configuration names for the algorithm (``hbase.io.compress.<name>.codec``; HBase 2.4
hard-codes the classes), one ``write`` of the whole payload followed by ``finish``:

- ``GZ``: ``ReusableStreamGzipCodec``, one gzip member.
- ``SNAPPY`` and ``LZ4``: Hadoop's ``SnappyCodec`` / ``Lz4Codec`` (the default class on every
  line: native libhadoop on Hadoop 2.10, snappy-java and lz4-java on Hadoop 3.3+) and HBase 2.5+'s
  ``hbase-compression-*`` codecs (aircompressor, xerial snappy, lz4-java) all write Hadoop's
  ``BlockCompressorStream`` framing: the payload's length as a big-endian int, then for each
  segment of at most ``MAX_INPUT`` bytes a big-endian int and that segment compressed on its own
  (raw snappy, or an LZ4 *block* without its size). Their readers
  (``BlockDecompressorStream``, HBase 2.6's ``BlockDecompressorHelper``) decompress chunk after
  chunk until the length is reached, each chunk into a 256 KiB buffer: the segment size is what
  makes a chunk fit on every reader (``MAX_INPUT`` is what HBase's codecs and Hadoop's snappy use;
  Hadoop's Lz4Codec cuts larger segments, which no reader needs).
- ``ZSTD``: HBase 2.5+'s codecs (``hbase-compression-zstd`` on zstd-jni, ``-aircompressor``)
  write the same block framing, each chunk one zstd frame. Hadoop's ``ZStandardCodec`` (the
  default class, native libhadoop only) writes a bare zstd stream (``CompressorStream``, no
  lengths) instead: a region server configured with it cannot decode these files (the index
  blocks are compressed too, so its validation of a file fails before the load). HBase 2.4 has no block-framed zstd codec at all: :func:`check_line`
  refuses ZSTD there in one line; on 2.5+ the server's codec setting cannot be seen from a client.
- ``LZO`` (GPL hadoop-lzo), ``BZIP2``, ``LZMA`` and ``BROTLI``: not written (refused in one line).
"""

from __future__ import annotations

import gzip
import re
import struct

import cramjam

from keyshape.errors import BadInput, StoreError

__all__ = [
    "BUFFER_SIZE",
    "MAX_INPUT",
    "ORDINALS",
    "WRITABLE",
    "check_line",
    "check_writable",
    "compress_block",
    "decompress_block",
    "name_of",
]

# Compression.Algorithm's ordinals, as the trailer's compression_codec records them (HBase 2.5
# added LZMA and BROTLI after ZSTD; the order never changes, files depend on it).
ORDINALS = {"LZO": 0, "GZ": 1, "NONE": 2, "SNAPPY": 3, "LZ4": 4, "BZIP2": 5, "ZSTD": 6, "LZMA": 7, "BROTLI": 8}
WRITABLE = ("NONE", "GZ", "SNAPPY", "LZ4", "ZSTD")
_BLOCK_FRAMED = ("SNAPPY", "LZ4", "ZSTD")

# io.compression.codec.{snappy,lz4,zstd}.buffersize and HBase's hbase.io.compress.*.buffersize
# default: the size of the reader's decompression buffer.
BUFFER_SIZE = 256 * 1024
# BlockCompressorStream's MAX_INPUT_SIZE with CompressionUtil.compressionOverhead (size / 6 + 32):
# the largest segment one chunk holds.
MAX_INPUT = BUFFER_SIZE - (BUFFER_SIZE // 6 + 32)
# Fast levels, as GZ's 1: the copy is CPU-bound, and the family's first major compaction rewrites
# the files at the cluster's own level.
_GZ_LEVEL = 1
_ZSTD_LEVEL = 1
_INT = struct.Struct(">i")


def name_of(ordinal: int) -> str:
    """The algorithm name of a trailer's ``compression_codec``."""
    for name, value in ORDINALS.items():
        if value == ordinal:
            return name
    raise StoreError(f"unknown HFile compression codec ordinal {ordinal}")


def check_writable(family: str, compression: str) -> str:
    """``compression`` upper-cased when the bulk copy writes it; BadInput in one line otherwise."""
    name = compression.upper()
    if name not in WRITABLE:
        why = "no codec that writes exactly what HBase reads" if name in ORDINALS else "not an HBase compression"
        raise BadInput(
            f"family {family!r} of the new table uses COMPRESSION {name}; the bulk copy writes {', '.join(WRITABLE[:-1])} or {WRITABLE[-1]} "
            f"({name}: {why}): alter the family to one of them for the copy, or copy with --via puts"
        )
    return name


def check_line(family: str, compression: str, version: str) -> None:
    """BadInput in one line when HBase ``version`` (the master's) reads ``compression`` otherwise
    than this module writes it: ZSTD before 2.5, whose only zstd codec is Hadoop's
    ``ZStandardCodec`` (a bare zstd stream; HBase's block-framed zstd codecs came with 2.5)."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if compression.upper() == "ZSTD" and match and (int(match[1]), int(match[2])) < (2, 5):
        raise BadInput(
            f"family {family!r} of the new table uses COMPRESSION ZSTD; HBase {version} reads ZSTD only through Hadoop's ZStandardCodec "
            f"(a bare zstd stream, not the block framing the bulk copy writes): alter the family to NONE, GZ, SNAPPY or LZ4 for the copy, "
            f"or copy with --via puts"
        )


def _segments(data: bytes) -> list[bytes]:
    view = memoryview(data)
    return [bytes(view[i : i + MAX_INPUT]) for i in range(0, len(data), MAX_INPUT)]


def _compress_raw(name: str, segment: bytes) -> bytes:
    if name == "SNAPPY":
        return bytes(cramjam.snappy.compress_raw(segment))
    if name == "LZ4":
        return bytes(cramjam.lz4.compress_block(segment, store_size=False))
    return bytes(cramjam.zstd.compress(segment, level=_ZSTD_LEVEL))


def _decompress_raw(name: str, chunk: bytes, size: int) -> bytes:
    if name == "SNAPPY":
        return bytes(cramjam.snappy.decompress_raw(chunk))
    if name == "LZ4":
        # An LZ4 block does not record its size. What is left of a run up to MAX_INPUT is one
        # chunk whatever the writer (no codec's segment is shorter): its exact size is known, and
        # decompress_block is given it (cramjam 2.14's decompress_block_into returned the right
        # length with wrong bytes for an 80-byte block of zero-heavy cells). Beyond it, decompress
        # into the room left and keep what came out.
        if size <= MAX_INPUT:
            return bytes(cramjam.lz4.decompress_block(chunk, output_len=size))
        room = bytearray(size)
        return bytes(memoryview(room)[: cramjam.lz4.decompress_block_into(chunk, room)])
    return bytes(cramjam.zstd.decompress(chunk))


def compress_block(compression: str, data: bytes) -> bytes:
    """One block's payload as HBase's codec for ``compression`` (a name of WRITABLE) writes it."""
    if compression == "NONE":
        return data
    if compression == "GZ":
        return gzip.compress(data, compresslevel=_GZ_LEVEL, mtime=0)
    if compression not in _BLOCK_FRAMED:
        raise BadInput(f"HFile compression {compression!r} is not supported here; use {', '.join(WRITABLE)}")
    # An empty payload (the meta index) is the length 0 alone, as BlockCompressorStream.finish writes it.
    parts = [_INT.pack(len(data))]
    for segment in _segments(data):
        chunk = _compress_raw(compression, segment)
        parts += (_INT.pack(len(chunk)), chunk)
    return b"".join(parts)


def decompress_block(compression: str, payload: bytes, size: int) -> bytes:
    """The ``size`` bytes of one block ``payload`` written with ``compression``; StoreError
    (one line) for a payload that is not that codec's framing."""
    if compression == "NONE":
        return payload
    if compression == "GZ":
        return gzip.decompress(payload)
    if compression not in _BLOCK_FRAMED:
        raise StoreError(f"HFile compression {compression} cannot be read here")
    out: list[bytes] = []
    done, p = 0, 0
    try:
        # BlockDecompressorStream: a length, then chunks until that many bytes came out; again
        # while the payload goes on (a writer may frame a block in several such runs).
        while p < len(payload):
            (total,) = _INT.unpack_from(payload, p)
            p += 4
            produced = 0
            while produced < total:
                (clen,) = _INT.unpack_from(payload, p)
                p += 4
                if clen <= 0 or p + clen > len(payload):
                    raise StoreError(f"{compression} block: a chunk of {clen} bytes at offset {p - 4} does not fit the payload")
                piece = _decompress_raw(compression, payload[p : p + clen], min(total - produced, BUFFER_SIZE))
                p += clen
                produced += len(piece)
                out.append(piece)
            if produced != total:
                raise StoreError(f"{compression} block: {produced} bytes decompressed, its framing says {total}")
            done += produced
    except (struct.error, cramjam.DecompressionError) as e:
        raise StoreError(f"{compression} block: not {compression} block framing ({e})") from None
    if done != size:
        raise StoreError(f"{compression} block: {done} bytes decompressed, the block header says {size}")
    return b"".join(out)
