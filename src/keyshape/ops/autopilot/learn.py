"""Stage 2, learn: the table's workload, from the cluster itself.

Measured: the write and read request rates from the observed history (rows a second: HBase counts
one write request a mutated row), their trend, each key range's rates, the live region servers,
and a bounded key-only sample of the live table (``ops.sample.sample_table``: keys and their cell
timestamps, no values) decoded by the table's key schema into records. Each sampled key stands
for the rows of its region between it and the next sampled key (``weights``); its cell timestamp
says when it was last written, so the sample in cell-timestamp order is the table's write stream.

Assumed (and said so): the read patterns, unless ``--queries`` gives them (the counters say how
many reads, not which); the horizon and region size (HBase's defaults); the value bytes when the
store reports no size yet. The result carries a WORKLOAD.toml (``toml``) the operator can correct
and pass back with ``--queries``.

A table without a key schema is refused with what to give: inferring a key's fields from bytes
is not cheap to do right, and a wrong guess would re-key every row wrongly.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.advise.spec import AdviseSpec, load_spec, parse_spec
from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.autopilot.observed import Observed
from keyshape.ops.sample import TableSample, row_counts, sample_table
from keyshape.schema import KeySchema
from keyshape.store.base import Store

__all__ = ["ASSUMED_VALUE_BYTES", "Learned", "learn", "records_table", "workload_toml"]

ASSUMED_VALUE_BYTES = 100  # bytes a row besides its key when the store reports no size yet
ASSUMED_HORIZON_DAYS = 365
ASSUMED_REGION_SIZE = "10GiB"  # HBase's hbase.hregion.max.filesize default
SAMPLE_ROWS = 20_000  # keys kept at most, over all regions


@dataclass
class Learned:
    """The learned workload. Rates in rows (or reads) a second; ``growth_per_hour``: the write
    rate's trend over the history as a fraction of its mean an hour (0 with too few intervals);
    ``regions``: (start, end, writes/s, reads/s) of each observed key range; ``records``: the
    sampled keys decoded (field -> list of values, in key order), ``times`` their cell timestamps
    (ms), ``weights`` the rows each stands for; ``spec``/``toml``: the workload for advise;
    ``measured``/``assumed``: what the report says of each number; ``complete``: every region
    was sampled and every key decoded (else ``incomplete`` says what was not)."""

    table: str
    schema: KeySchema
    write_rate: float
    read_rate: float
    growth_per_hour: float
    regions: list[tuple[bytes, bytes, float, float]]
    servers: int
    keys: list[bytes]
    records: dict[str, list[Any]]
    times: np.ndarray
    weights: np.ndarray
    rows: int
    bytes_per_row: float
    spec: AdviseSpec
    toml: str
    measured: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    sample_seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.incomplete

    def to_dict(self) -> dict[str, Any]:
        from keyshape.core.hbytes import to_string_binary

        return {
            "table": self.table,
            "write_rate": self.write_rate,
            "read_rate": self.read_rate,
            "growth_per_hour": self.growth_per_hour,
            "servers": self.servers,
            "rows": self.rows,
            "bytes_per_row": self.bytes_per_row,
            "sampled_keys": len(self.keys),
            "regions": [
                {"start": to_string_binary(s), "end": to_string_binary(e), "writes_per_s": w, "reads_per_s": r} for s, e, w, r in self.regions
            ],
            "workload_toml": self.toml,
            "measured": list(self.measured),
            "assumed": list(self.assumed),
            "incomplete": list(self.incomplete),
        }


def _ms(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return int(v.timestamp() * 1000)
    return v


def records_table(schema: KeySchema, records: dict[str, list[Any]]) -> Any:
    """The records as an Arrow table typed by the schema's fields (timestamps as ms), the shape
    advise's sample reads."""
    import pyarrow as pa

    cols: dict[str, Any] = {}
    for f in schema.fields:
        values = records[f.name]
        if f.type == "timestamp":
            cols[f.name] = pa.array([_ms(v) for v in values], pa.int64()).cast(pa.timestamp("ms"))
        elif f.type in ("int64", "int32", "int16", "int8", "uint64", "uint32"):
            cols[f.name] = pa.array(values, pa.int64())
        elif f.type in ("float64", "float32"):
            cols[f.name] = pa.array(values, pa.float64())
        elif f.type == "bytes":
            cols[f.name] = pa.array(values, pa.binary())
        else:
            cols[f.name] = pa.array([str(v) for v in values], pa.string())
    return pa.table(cols)


def _trend(observed: Observed) -> float:
    rates = observed.rates("write")
    if len(rates) < 4 or rates.mean() <= 0:
        return 0.0
    t = (observed.times[1:] - observed.times[0]) / 3600.0
    slope = float(np.polyfit(t, rates, 1)[0])
    return slope / float(rates.mean())


def _decode(schema: KeySchema, sample: TableSample) -> tuple[list[bytes], dict[str, list[Any]], list[int], list[float], int, str]:
    keys: list[bytes] = []
    recs: dict[str, list[Any]] = {f.name: [] for f in schema.fields}
    times: list[int] = []
    weights: list[float] = []
    bad = 0
    example = ""
    for r in sample.regions:
        each = r.scanned / len(r.keys) if r.keys else 0.0
        for i, k in enumerate(r.keys):
            try:
                rec = schema.decode(k)
            except KeyshapeError as exc:
                bad += 1
                example = example or f"{k!r} ({exc})"
                continue
            keys.append(k)
            for name in recs:
                recs[name].append(rec[name])
            times.append(r.times[i] if i < len(r.times) else 0)
            weights.append(max(each, 1.0))
    return keys, recs, times, weights, bad, example


def learn(
    store: Store,
    schema: KeySchema | None,
    observed: Observed,
    *,
    queries: str | None = None,
    sample_rows: int = SAMPLE_ROWS,
    time_limit: float = 30.0,
    batch_size: int = 1000,
) -> Learned:
    """Learn ``observed.table``'s workload (module docstring). ``queries``: a WORKLOAD.toml whose
    read patterns (and entity) are taken as given; the write rate is always the measured one.
    ``sample_rows``, ``time_limit``, ``batch_size`` bound the live sample (keys kept, seconds,
    rows a round trip: small batches keep each scan RPC short on a busy region server)."""
    table = observed.table
    if schema is None:
        raise BadInput(
            f"table {table!r}: give its key schema (--schema S.toml: the key's fields, types and encodings; "
            "'keyshape phoenix catalog' writes one for a Phoenix table): the autopilot decodes the live keys by it and re-keys by it"
        )
    regions_now = store.regions(table)
    per_region = max(1, sample_rows // max(len(regions_now), 1))
    sample = sample_table(store, table, per_region, time_limit=time_limit, batch_size=batch_size)
    keys, recs, times, weights, bad, example = _decode(schema, sample)
    incomplete: list[str] = []
    if sample.timed_out:
        incomplete.append(f"the sample did not reach every region within {time_limit:.0f} s")
    if bad:
        incomplete.append(f"{bad} of {sample.keys} sampled keys do not decode by {schema.source}, e.g. {example}")
    if not keys:
        raise BadInput(f"table {table!r} holds no row the schema {schema.source} decodes: nothing to learn from")
    counts = row_counts(sample)
    rows = counts.rows
    store_bytes = sum(r.store_size_bytes for r in regions_now)
    key_bytes = float(np.mean([len(k) for k in keys]))
    measured: list[str] = []
    assumed: list[str] = []
    write_rate = float(observed.writes[1:].sum() / observed.seconds) if observed.seconds > 0 else 0.0
    read_rate = float(observed.reads[1:].sum() / observed.seconds) if observed.seconds > 0 else 0.0
    measured.append(f"write rate {write_rate:,.1f} rows/s and read rate {read_rate:,.1f} reads/s over {observed.seconds:,.0f} s ({observed.source})")
    growth = _trend(observed)
    measured.append(f"write-rate trend {growth:+.1%} an hour over the history (not extrapolated to a year: the spec's growth is 0)")
    servers = max(1, observed.servers)
    measured.append(f"{servers} live region server(s), {len(regions_now)} region(s), {rows:,} rows ({'exact' if counts.exact else 'estimated'})")
    if store_bytes > 0 and rows > 0:
        bytes_per_row = store_bytes / rows
        value_bytes = max(1, int(bytes_per_row - key_bytes))
        measured.append(f"{bytes_per_row:,.0f} bytes a row on disk (store size / rows)")
    else:
        bytes_per_row = key_bytes + ASSUMED_VALUE_BYTES
        value_bytes = ASSUMED_VALUE_BYTES
        assumed.append(f"{ASSUMED_VALUE_BYTES} value bytes a row (the region servers report no store size yet)")
    measured.append(f"{len(keys):,} keys sampled from the live table in {sample.seconds:.1f} s (key-only scans), decoded by {schema.source}")
    time_field = next((f.name for f in schema.fields if f.type == "timestamp"), None)
    data: dict[str, Any]
    if queries is not None:
        given = load_spec(queries)
        data = _spec_dict(given)
        assumed.append(f"read patterns as given in {queries}")
    else:
        data = {"entity": {"id": list(schema.field_names)}, "pattern": _proposed_patterns(schema, time_field, read_rate, assumed)}
        if time_field:
            data["entity"]["time"] = time_field
    data["write"] = {"rows_per_second": max(write_rate, 0.001), "value_bytes": value_bytes}
    data.setdefault("horizon", {"days": ASSUMED_HORIZON_DAYS})
    data["cluster"] = {"servers": servers, "region_size": data.get("cluster", {}).get("region_size", ASSUMED_REGION_SIZE)}
    if queries is None:
        assumed.append(f"horizon {ASSUMED_HORIZON_DAYS} days and region size {ASSUMED_REGION_SIZE} (HBase's default split size)")
    text = workload_toml(data, measured, assumed)
    spec = parse_spec(data, source=f"<learned workload of {table}>")
    return Learned(
        table=table,
        schema=schema,
        write_rate=write_rate,
        read_rate=read_rate,
        growth_per_hour=growth,
        regions=[
            (s, e, float(w), float(r))
            for s, e, w, r in zip(observed.starts, observed.ends, observed.region_rates("write"), observed.region_rates("read"))
        ],
        servers=servers,
        keys=keys,
        records=recs,
        times=np.asarray(times, dtype=np.int64),
        weights=np.asarray(weights, dtype=np.float64),
        rows=rows,
        bytes_per_row=bytes_per_row,
        spec=spec,
        toml=text,
        measured=measured,
        assumed=assumed,
        incomplete=incomplete,
        sample_seconds=sample.seconds,
    )


def _proposed_patterns(schema: KeySchema, time_field: str | None, read_rate: float, assumed: list[str]) -> list[dict[str, Any]]:
    """Read patterns proposed from what the cluster shows: the measured reads as gets of one
    record; a per-leading-field recency read when the key leads with an entity before its time."""
    ids = list(schema.field_names)
    rate = read_rate if read_rate > 0 else 1.0
    out: list[dict[str, Any]] = [{"name": "one record by its key", "kind": "get", "fields": ids, "rate": round(rate, 3), "goal_ms": 20}]
    assumed.append(
        f"the {read_rate:,.1f} reads/s measured are gets of one record by its key (the counters tell how many reads, not which)"
        if read_rate > 0
        else "1 get/s of one record by its key (no reads were measured)"
    )
    lead = ids[0]
    if time_field and lead != time_field:
        out.append(
            {"name": f"latest of one {lead}", "kind": "latest", "fields": [lead], "limit": 10, "rate": round(max(rate / 10, 0.1), 3), "goal_ms": 50}
        )
        assumed.append(f"the newest rows of one {lead} are read (the key leads with {lead} before {time_field}), at a tenth of the read rate")
    return out


def _spec_dict(spec: AdviseSpec) -> dict[str, Any]:
    entity: dict[str, Any] = {"id": list(spec.id_fields)}
    if spec.time_field:
        entity["time"] = spec.time_field
    patterns = []
    for p in spec.patterns:
        d: dict[str, Any] = {"name": p.name, "kind": p.kind, "fields": list(p.fields), "rate": p.rate, "goal_ms": p.goal_ms}
        if p.kind == "window":
            d["window"] = f"{p.window_s:g}s"
        if p.kind == "latest":
            d["limit"] = p.limit
        if p.kind == "scan":
            d["share"] = p.share
        patterns.append(d)
    out: dict[str, Any] = {
        "entity": entity,
        "pattern": patterns,
        "horizon": {"days": spec.horizon_days},
        "cluster": {"region_size": spec.region_size},
    }
    if spec.types:
        out["types"] = dict(spec.types)
    return out


def _value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.6g}" if "e" not in f"{v:.6g}" else repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def workload_toml(data: dict[str, Any], measured: list[str], assumed: list[str]) -> str:
    """The learned workload as a WORKLOAD.toml, headed by what was measured and what assumed."""
    lines = ["# The workload keyshape autopilot learned from the cluster. Correct it and pass it back with --queries.", "# Measured:"]
    lines += [f"#   {m}" for m in measured]
    lines.append("# Assumed (check these):")
    lines += [f"#   {a}" for a in assumed]
    for section in ("entity", "write", "horizon", "cluster", "types"):
        if section in data:
            lines += ["", f"[{section}]"] + [f"{k} = {_value(v)}" for k, v in data[section].items()]
    for p in data.get("pattern", []):
        lines += ["", "[[pattern]]"] + [f"{k} = {_value(v)}" for k, v in p.items()]
    return "\n".join(lines) + "\n"
