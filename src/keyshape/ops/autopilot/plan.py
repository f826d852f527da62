"""Stage 6, plan: what to run to move the table to the chosen design, and what it costs.

NEW's schema file is the chosen design's key (prefix, fields, encodings, pre-split) under the
current table's own ``[table]`` (its families and versions: a migration keeps every cell), named
``<table>_<suffix>``; it is loaded back before it is shown. The plan gives the HBase shell
``create`` statements (``schema.ddl``), the exact ``keyshape migrate --online`` command, the
copy's estimated time (the rows at a copy rate: the proof's measured write rate when ``--prove``
ran, else an assumed rate said as such) and NEW's disk (rows x the bytes a row measured on OLD),
and the risks an operator must handle.
"""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from keyshape.analysis.advise.score import Score
from keyshape.ops.autopilot.diagnose import Diagnosis
from keyshape.ops.autopilot.learn import Learned
from keyshape.ops.autopilot.predict import Replay
from keyshape.schema import KeySchema

__all__ = ["ASSUMED_COPY_ROWS_PER_S", "Plan", "make_plan", "new_schema_toml"]

ASSUMED_COPY_ROWS_PER_S = 20_000.0  # rows a second the copy is assumed to move without a proof


@dataclass
class Plan:
    """Everything an operator needs to run the move, as data (terminal, JSON and HTML render it)."""

    table: str
    new_table: str
    design: str
    schema_path: str
    schema_toml: str
    create: list[str]
    create_command: str
    migrate_command: str
    cutover_command: str
    rows: int
    copy_rows_per_s: float
    copy_seconds: float
    disk_bytes: float
    current_share: float
    new_share: float
    new_regions: int
    diagnosis: dict[str, Any]
    estimates: list[str] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    current_replay: dict[str, Any] = field(default_factory=dict)
    new_replay: dict[str, Any] = field(default_factory=dict)
    learned: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return str(v)


def new_schema_toml(current: KeySchema, design_toml: str, new_name: str, note: str) -> str:
    """The chosen design's key under the current table's ``[table]`` renamed ``new_name``."""
    old = tomllib.loads(Path(current.source).read_text(encoding="utf-8"))
    new = tomllib.loads(design_toml)
    table = dict(old["table"])
    table["name"] = new_name
    lines = [f"# {note}", "[table]"]
    families = table.pop("families", [])
    lines += [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    for fam in families:
        lines += ["", "[[table.families]]"] + [f"{k} = {_toml_value(v)}" for k, v in fam.items()]
    key = dict(new["key"])
    fields = key.pop("fields", [])
    lines += ["", "[key]"] + [f"{k} = {_toml_value(v)}" for k, v in key.items()]
    for f in fields:
        lines += ["", "[[key.fields]]"] + [f"{k} = {_toml_value(v)}" for k, v in f.items()]
    if "splits" in new:
        lines += ["", "[splits]"] + [f"{k} = {_toml_value(v)}" for k, v in new["splits"].items()]
    text = "\n".join(lines) + "\n"
    KeySchema.from_dict(tomllib.loads(text), source="<new design>")  # a plan whose schema does not load is never shown
    return text


def make_plan(
    learned: Learned,
    diagnosis: Diagnosis,
    chosen: Score,
    schema_toml: str,
    schema_path: Path,
    current: Replay,
    new: Replay,
    hbase_url: str,
    state_path: Path,
    copy_rows_per_s: float | None = None,
) -> Plan:
    """The plan for moving ``learned.table`` to ``chosen`` (module docstring). ``schema_path`` is
    where NEW's schema file is (to be) written; ``copy_rows_per_s`` a measured copy rate."""
    from keyshape.schema.ddl import shell_create_statements

    schema = KeySchema.from_dict(tomllib.loads(schema_toml), source=str(schema_path))
    old_path = learned.schema.source
    q = shlex.quote
    migrate = f"keyshape migrate {q(old_path)} {q(str(schema_path))} --online --hbase {q(hbase_url)} --state {q(str(state_path))}"
    estimates: list[str] = []
    rate = copy_rows_per_s
    if rate is None or rate <= 0:
        rate = ASSUMED_COPY_ROWS_PER_S
        estimates.append(f"copy rate {rate:,.0f} rows/s assumed (run with --prove to measure the cluster's write rate for this design)")
    else:
        estimates.append(f"copy rate {rate:,.0f} rows/s: the proof's measured write rate of this design on this cluster")
    seconds = learned.rows / rate
    disk = learned.rows * learned.bytes_per_row
    estimates.append(
        f"{learned.rows:,} rows x {learned.bytes_per_row:,.0f} bytes a row (measured on {learned.table}) = {disk / 2**20:,.1f} MiB before replication"
    )
    risks = [
        f"every reader and writer of {learned.table} must switch to {schema.table.full_name} and its key at the cut-over (the key bytes change: "
        f"{chosen.design.label})",
        "the online migration needs REPLICATION_SCOPE => 1 on the old table's families (migrate --online --set-replication-scope sets it; then "
        "every replication peer of the cluster receives those edits)",
        f"OLD keeps taking writes until the cut-over; NEW keeps every delete marker until then ({learned.table}'s WALs are kept for the peer)",
    ]
    if schema.prefix.salted:
        buckets = schema.prefix.bucket_count() or 0
        risks.append(f"range reads fan out to the {buckets:,} salt buckets (one scan each); gets are unchanged")
    if learned.schema.indexes:
        risks.append("the old design has index tables: they are not migrated; rebuild them for NEW")
    if learned.incomplete:
        risks.append("the learned workload is incomplete: " + "; ".join(learned.incomplete))
    return Plan(
        table=learned.table,
        new_table=schema.table.full_name,
        design=chosen.design.label,
        schema_path=str(schema_path),
        schema_toml=schema_toml,
        create=shell_create_statements(schema).splitlines(),
        create_command=f"keyshape create {q(str(schema_path))} --hbase {q(hbase_url)}",
        migrate_command=migrate,
        cutover_command=migrate + " --cutover",
        rows=learned.rows,
        copy_rows_per_s=rate,
        copy_seconds=seconds,
        disk_bytes=disk,
        current_share=current.busiest_share,
        new_share=new.busiest_share,
        new_regions=len(new.starts),
        diagnosis=diagnosis.to_dict(),
        estimates=estimates,
        risks=risks,
        current_replay=current.to_dict(),
        new_replay=new.to_dict(),
        learned=learned.to_dict(),
    )
