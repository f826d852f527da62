"""``keyshape splits ...`` (RegionSplitter's algorithms, createTable(start, end, n), bucket
boundaries) and ``keyshape hash`` (one salt or hash as the Java code computes it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from keyshape.errors import BadInput

_FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["shell", "file", "json"]),
    default="shell",
    show_default=True,
    help="shell: an HBase shell create command; file: a SPLITS_FILE; json: a JSON document.",
)


F = TypeVar("F", bound=Callable[..., Any])  # a click command function, returned decorated


def _key(text: str) -> bytes:
    """A key typed on the command line, in toStringBinary form (\\xNN for other bytes)."""
    from keyshape.core.hbytes import to_bytes_binary

    return to_bytes_binary(text, strict=True)


def _emit_splits(keys: list[bytes], fmt: str, table: str, family: str) -> None:
    from keyshape.core.names import check_table_name
    from keyshape.core.splits import format_splits

    # The statement goes to an HBase shell: a name HBase refuses is refused here first (issue 40).
    check_table_name(table, "--table")
    if not family or any(c in family for c in ":'\"\\") or not family.isprintable():
        raise BadInput(f"--family {family!r} is not a column family HBase accepts: give printable characters without ':' or quotes")

    click.echo(format_splits(keys, fmt, table=table, family=family), nl=False)


# Far beyond what one HBase table runs with: a few hundred regions per region server is the usual
# ceiling (each region keeps a memstore per family, its own store files and a row in hbase:meta),
# so 10,000 regions already means a very large cluster.
MAX_REGIONS = 10_000


def _check_regions(regions: int, force: bool) -> None:
    from keyshape.errors import BadInput

    if regions > MAX_REGIONS and not force:
        raise BadInput(
            f"--regions {regions:,} is far more than an HBase table runs with (a few hundred regions "
            f"per region server; {MAX_REGIONS:,} needs a very large cluster, and every region costs "
            "memstores, files and a hbase:meta row); use fewer regions, or add --force if you mean it"
        )


def _split_command(fn: F, least: int = 2) -> F:
    fn = click.option("--force", is_flag=True, help=f"Allow more than {MAX_REGIONS:,} regions.")(fn)
    fn = click.option("--family", default="f", show_default=True, help="Column family for --format shell/json.")(fn)
    fn = click.option("--table", default="t", show_default=True, help="Table name for --format shell/json.")(fn)
    fn = _FORMAT_OPTION(fn)
    return click.option("--regions", "-n", type=click.IntRange(min=least), required=True, help=f"Number of regions (>= {least}).")(fn)


def _range_split_command(fn: F) -> F:
    # createTable(desc, start, end, n) counts the two open-ended regions around [start, end].
    return _split_command(fn, least=3)


@click.group("splits")
def splits_group() -> None:
    """Compute split keys for a pre-split table (keys shown in HBase toStringBinary form)."""


def _string_split_command(name: str, algorithm: str, digits: str, last: str, doc: str) -> click.Command:
    """``keyshape splits NAME``: a RegionSplitter string algorithm over rows of ``digits`` digits
    (``algorithm`` names its function in keyshape.core.splits, imported only when the command runs)."""

    @splits_group.command(name, help=doc)
    @_split_command
    @click.option("--first", default="00000000", show_default=True, help=f"First row, {digits} digits.")
    @click.option("--last", default=last, show_default=True, help=f"Last row, {digits} digits.")
    def command(regions: int, fmt: str, table: str, family: str, force: bool, first: str, last: str) -> None:
        from keyshape.core import splits as algorithms

        _check_regions(regions, force)
        _emit_splits(getattr(algorithms, algorithm)(regions, first, last), fmt, table, family)

    return command


splits_hex = _string_split_command("hex", "hex_string_split", "hex", "FFFFFFFF", "RegionSplitter HexStringSplit.")
splits_decimal = _string_split_command("decimal", "decimal_string_split", "decimal", "99999999", "RegionSplitter DecimalStringSplit.")


@splits_group.command("uniform")
@_split_command
@click.option("--first", default="", help="First row (toStringBinary); default empty.")
@click.option("--last", default="\\xFF" * 8, show_default=True, help="Last row (toStringBinary).")
def splits_uniform(regions: int, fmt: str, table: str, family: str, force: bool, first: str, last: str) -> None:
    """RegionSplitter UniformSplit (raw bytes, evenly spaced)."""
    _check_regions(regions, force)
    from keyshape.core.splits import uniform_split

    _emit_splits(uniform_split(regions, _key(first), _key(last)), fmt, table, family)


@splits_group.command("range")
@_range_split_command
@click.option("--start", required=True, help="Start key (toStringBinary).")
@click.option("--end", required=True, help="End key (toStringBinary).")
def splits_range(regions: int, fmt: str, table: str, family: str, force: bool, start: str, end: str) -> None:
    """What Admin.createTable(desc, start, end, regions) creates: the regions before START and
    after END count too, so at least 3."""
    _check_regions(regions, force)
    from keyshape.core.splits import range_split

    _emit_splits(range_split(_key(start), _key(end), regions), fmt, table, family)


@splits_group.command("buckets")
@_split_command
@click.option(
    "--encoding",
    type=click.Choice(["byte", "decimal", "long"]),
    default="byte",
    show_default=True,
    help="How the bucket id leads the key: byte (one unsigned byte, or --width bytes, as a Phoenix "
    "or HBaseWD salt), decimal (zero-padded digits, as a %02d Java salt), long (Bytes.toBytes(long)).",
)
@click.option("--width", type=int, default=None, help="Bytes (byte) or digits (decimal) per bucket id.")
def splits_buckets(regions: int, fmt: str, table: str, family: str, force: bool, encoding: str, width: int | None) -> None:
    """Boundaries of salt/partition buckets 0..regions-1 (one region per bucket)."""
    _check_regions(regions, force)
    from keyshape.core.splits import bucket_splits

    _emit_splits(bucket_splits(regions, encoding, width), fmt, table, family)


def _java_text_hash(key: bytes, _buckets: int | None, _tags: str, _width: int) -> object:
    from keyshape.core import hashing

    try:
        return hashing.java_string_hash(key.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput("hash java reads VALUE as UTF-8 text; use java-bytes for raw bytes") from None


def _bucketed(name: str) -> Callable[[bytes, int | None, str, int], object]:
    """A salt that needs --buckets: ``keyshape.core.hashing.<name>(key, buckets)``."""

    def salt(key: bytes, buckets: int | None, _tags: str, _width: int) -> object:
        from keyshape.core import hashing

        if buckets is None:
            raise BadInput(f"hash {_ALGORITHM_NAMES[name]} needs --buckets N (1..256)")
        return getattr(hashing, name)(key, buckets)

    return salt


def _plain(name: str) -> Callable[[bytes, int | None, str, int], object]:
    """A hash of the key's bytes alone: ``keyshape.core.hashing.<name>(key)``."""

    def digest(key: bytes, _buckets: int | None, _tags: str, _width: int) -> object:
        from keyshape.core import hashing

        return getattr(hashing, name)(key)

    return digest


def _opentsdb(key: bytes, buckets: int | None, tags: str, width: int) -> object:
    from keyshape.core import hashing
    from keyshape.core.hbytes import to_string_binary

    return to_string_binary(hashing.opentsdb_salt(key, _key(tags), 20 if buckets is None else buckets, width))


# The command's algorithms, each computed in one place (keyshape.core.hashing holds the functions).
_ALGORITHMS: dict[str, Callable[[bytes, int | None, str, int], object]] = {
    "md5": _plain("md5_hex"),
    "java": _java_text_hash,
    "java-bytes": _plain("java_bytes_hash"),
    "crc32": _plain("crc32"),
    "murmur3": _plain("murmur3_32"),
    "phoenix": _bucketed("phoenix_salt"),
    "hbasewd": _bucketed("hbasewd_one_byte_hash"),
    "opentsdb": _opentsdb,
}
_ALGORITHM_NAMES = {"phoenix_salt": "phoenix", "hbasewd_one_byte_hash": "hbasewd"}
# The options each algorithm reads; any other given is refused (md5 --buckets 16 used to be ignored).
_TAKES = {"phoenix": {"buckets"}, "hbasewd": {"buckets"}, "opentsdb": {"buckets", "tags", "width"}}


@click.command("hash")
@click.argument("algorithm", type=click.Choice(list(_ALGORITHMS)))
@click.argument("value")
@click.option("--buckets", type=int, default=None, help="Salt buckets (phoenix, hbasewd: required; opentsdb: 20).")
@click.option("--tags", default="", help="opentsdb: tag UID bytes (toStringBinary) following the metric UID.")
@click.option("--width", type=int, default=1, show_default=True, help="opentsdb: salt width in bytes.")
def hash_command(algorithm: str, value: str, buckets: int | None, tags: str, width: int) -> None:
    """Hash or salt VALUE (a key in toStringBinary form) the way Java/HBase/Phoenix/OpenTSDB do.

    java is String.hashCode of VALUE read as UTF-8; java-bytes is Arrays.hashCode of its bytes;
    phoenix/hbasewd print the bucket number; opentsdb prints the salt bytes for metric UID VALUE.
    """
    ctx = click.get_current_context()
    given = {name for name in ("buckets", "tags", "width") if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE}
    takes = _TAKES.get(algorithm, set())
    if given - takes:
        name = sorted(given - takes)[0]
        raise click.UsageError(f"hash {algorithm} takes no --{name} (it hashes VALUE alone); drop it")
    click.echo(_ALGORITHMS[algorithm](_key(value), buckets, tags, width))
