"""The autopilot's stages in order, stopping after any, with a state file to resume from.

``run`` calls the stages (diagnose, learn, advise, predict, prove, plan, act) in order and stops
after ``stop_after``. The plan is what persists: the state file (JSON) records each finished
stage's summary and the plan (NEW's schema file, its commands); ``--apply`` and ``--cutover``
act on the SAVED plan, the one the operator read, never on a design recomputed since, and only
after the safety checks (``safety``) pass again on the cluster as it is now.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput
from keyshape.ops.autopilot.advise import Advised, advise_stage
from keyshape.ops.autopilot.diagnose import Diagnosis, diagnose
from keyshape.ops.autopilot.learn import Learned, learn
from keyshape.ops.autopilot.observed import Observed
from keyshape.ops.autopilot.plan import Plan, make_plan, new_schema_toml
from keyshape.ops.autopilot.predict import Replay, choose, migratable, replay
from keyshape.ops.autopilot.prove import Proved, prove_stage
from keyshape.ops.autopilot.safety import cluster_problems, refuse
from keyshape.schema import KeySchema
from keyshape.store.base import Store

__all__ = ["STAGES", "AutopilotRun", "default_state_path", "load_state", "run"]

STAGES = ("diagnose", "learn", "advise", "predict", "prove", "plan", "act")
MAX_REPLAYED = 12  # designs replayed at most (advise's best that a migration can produce)


@dataclass
class AutopilotRun:
    """What one run did: each stage's result (None when not run), and ``acted`` lines."""

    table: str
    state_path: Path
    observed: Observed | None = None
    diagnosis: Diagnosis | None = None
    learned: Learned | None = None
    advised: Advised | None = None
    replays: dict[str, Replay] = field(default_factory=dict)
    current: Replay | None = None
    chosen: str = ""
    choice_notes: list[str] = field(default_factory=list)
    proved: Proved | None = None
    plan: Plan | None = None
    acted: list[str] = field(default_factory=list)
    stopped_after: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "state": str(self.state_path),
            "stopped_after": self.stopped_after,
            "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
            "learned": self.learned.to_dict() if self.learned else None,
            "advise": self.advised.to_dict() if self.advised else None,
            "predict": {
                "current": self.current.to_dict() if self.current else None,
                "designs": {k: {"design": r.label, "busiest_share": r.busiest_share, "fair_share": r.fair} for k, r in self.replays.items()},
                "chosen": self.chosen,
                "notes": self.choice_notes,
            },
            "prove": self.proved.to_dict() if self.proved else None,
            "plan": self.plan.to_dict() if self.plan else None,
            "acted": list(self.acted),
        }


def default_state_path(table: str) -> Path:
    return Path(f".keyshape-autopilot-{table.replace(':', '_')}.json")


def load_state(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except ValueError:
        raise BadInput(f"{path} is not an autopilot state file (not JSON); delete it or give another --state") from None


def _save(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)  # a Ctrl-C never leaves half a state file


def run(
    store: Store,
    table: str,
    schema: KeySchema | None,
    observe: Callable[[], Observed],
    *,
    hbase_url: str,
    queries: str | None = None,
    stop_after: str = "plan",
    prove: bool = False,
    apply: bool = False,
    cutover: bool = False,
    set_replication_scope: bool = False,
    max_lag: float = 2.0,
    sink_bind: str | None = None,
    state_path: Path | None = None,
    out_dir: Path | None = None,
    new_suffix: str = "v2",
    say: Callable[[str], None] = lambda _line: None,
) -> AutopilotRun:
    """The autopilot on ``table`` (module docstring). ``observe`` returns the table's observed
    load (serve's history or a bounded poll: the caller's, a layer above); ``say`` gets a line
    as each stage ends."""
    if stop_after not in STAGES:
        raise BadInput(f"--stage must be one of {', '.join(STAGES)}, got {stop_after!r}")
    state_path = state_path or default_state_path(table)
    out_dir = out_dir or state_path.parent
    state = load_state(state_path)
    if state and state.get("table") != table:
        raise BadInput(f"{state_path} is the autopilot state of table {state.get('table')!r}, not {table!r}; give another --state")
    result = AutopilotRun(table, state_path)
    if apply or cutover:
        # acting is on the SAVED plan only: the one a dry run showed the operator
        return _act(store, schema, state, state_path, result, apply, cutover, set_replication_scope, say, max_lag, sink_bind)
    state = {"table": table, "stages": {}}

    def done(stage: str, summary: Any) -> bool:
        state["stages"][stage] = summary
        _save(state_path, state)
        result.stopped_after = stage
        return stage == stop_after

    obs = result.observed = observe()  # once a run: a bounded poll takes its time
    d = result.diagnosis = diagnose(obs)
    since = f" since {datetime.fromtimestamp(d.since, timezone.utc):%Y-%m-%d %H:%M:%S} UTC" if d.since else ""
    say(f"diagnose: {d.verdict} ({d.pattern or 'no pattern'}){since}; busiest range {d.busiest_share:.0%} of the writes — {d.cause}")
    if done("diagnose", d.to_dict()):
        return result
    if not d.hot:
        # nothing to fix: a re-key of a table whose writes already spread only costs a migration
        say(f"diagnose: {table} is {d.verdict}; no fix to plan")
        return result
    lr = result.learned = learn(store, schema, obs, queries=queries)
    say(f"learn: {lr.write_rate:,.1f} rows/s written, {lr.read_rate:,.1f} reads/s, {len(lr.keys):,} keys sampled, {lr.rows:,} rows")
    if done("learn", lr.to_dict()):
        return result
    adv = result.advised = advise_stage(lr)
    say(f"advise: {len(adv.advice.ranked)} designs ranked; current design rank {adv.current.rank}; top {adv.advice.top.design.label}")
    if done("advise", adv.to_dict()):
        return result
    obs_times: tuple[float | None, float | None] = (float(obs.times[0]), float(obs.times[-1]))
    current = result.current = replay(lr, lr.schema, "current", f"current: {lr.schema.table.full_name}", *obs_times)
    eligible = [s for s in adv.advice.ranked if not migratable(s)][:MAX_REPLAYED]
    new_name = f"{lr.schema.table.name}_{new_suffix}"
    schemas: dict[str, tuple[KeySchema, str]] = {}
    for s in eligible:
        note = f"keyshape autopilot's design for {table}: {s.design.label} (advise rank {s.rank})"
        text = new_schema_toml(lr.schema, s.design.toml, new_name, note)
        schemas[s.design.name] = (KeySchema.from_dict(tomllib.loads(text), source=f"<{s.design.name}>"), text)
        result.replays[s.design.name] = replay(lr, schemas[s.design.name][0], s.design.name, s.design.label, *obs_times)
    chosen, notes = choose(adv.advice.ranked, result.replays)
    result.choice_notes = notes
    if chosen is None:
        raise BadInput(f"no design advise found for {table} spreads the replayed writes near fairly: " + "; ".join(notes[:3]))
    result.chosen = chosen.design.name
    r = result.replays[chosen.design.name]
    for note in notes[:3]:
        say(f"predict: passed over {note}")
    say(f"predict: replayed busiest share current {current.busiest_share:.0%} -> {chosen.design.label} {r.busiest_share:.0%} (fair {r.fair:.0%})")
    if done("predict", {"current": current.busiest_share, "chosen": chosen.design.name, "chosen_share": r.busiest_share, "fair": r.fair}):
        return result
    copy_rate = None
    if prove:
        refuse("prove", cluster_problems(store))
        pr = result.proved = prove_stage(adv, chosen, store)
        if pr.chosen is not None:
            copy_rate = pr.chosen.write_rows_per_s
            m = pr.chosen
            say(f"prove: measured {m.write_rows_per_s:,.0f} rows/s, busiest server {m.measured_share:.0%} (predicted {m.predicted_share:.0%})")
        if done("prove", pr.to_dict()):
            return result
    elif stop_after == "prove":
        raise BadInput("--stage prove needs --prove (the proof loads scratch tables: opt-in)")
    text = schemas[chosen.design.name][1]
    schema_path = out_dir / f"{new_name}.toml"
    online_state = out_dir / f".keyshape-autopilot-{new_name}.migrate.json"
    p = result.plan = make_plan(lr, d, chosen, text, schema_path, current, r, hbase_url, online_state, copy_rate)
    schema_path.write_text(text, encoding="utf-8")
    state["plan"] = p.to_dict()
    state["old_schema"] = str(lr.schema.source)
    state["online_state"] = str(online_state)
    state["complete"] = lr.complete
    state["incomplete"] = lr.incomplete
    state["contradictions"] = result.proved.problems if result.proved else []
    say(f"plan: {p.new_table} ({p.design}); wrote {schema_path}")
    done("plan", {"new_table": p.new_table, "schema": str(schema_path)})
    return result


def _act(
    store: Store,
    schema: KeySchema | None,
    state: dict[str, Any],
    state_path: Path,
    result: AutopilotRun,
    apply: bool,
    cutover: bool,
    set_replication_scope: bool,
    say: Callable[[str], None],
    max_lag: float = 2.0,
    sink_bind: str | None = None,
) -> AutopilotRun:
    from keyshape.ops.autopilot.act import apply_plan, cut_over
    from keyshape.store.hbase.store import HBaseStore

    plan = state.get("plan") or {}
    if not plan:
        raise BadInput(f"{state_path} holds no plan; run the autopilot without --apply first (a dry run) and read the plan it makes")
    reasons = cluster_problems(store)
    if not state.get("complete", False):
        reasons += state.get("incomplete") or ["the learned sample did not read the whole table"]
    reasons += state.get("contradictions") or []
    refuse("act", reasons)
    if not isinstance(store, HBaseStore):
        raise BadInput("--apply and --cutover need a real HBase (--hbase HOST:PORT): the online migration joins it as a replication peer")
    old = schema or KeySchema.load(state["old_schema"])
    new_path = Path(plan["schema_path"])
    online_state = Path(state["online_state"])
    if apply and not cutover:
        res = apply_plan(store, old, new_path, online_state, set_replication_scope=set_replication_scope, sink_bind=sink_bind)
        copied = res.copy.total_rows if res.copy is not None else None
        result.acted.append(
            f"started the online migration {plan['table']} -> {plan['new_table']}"
            + (f" ({copied:,} rows copied)" if copied is not None else "")
            + f"; peer {res.peer_id} left in place until the cut-over: run with --cutover (or `{plan['cutover_command']}`)"
        )
    if cutover:
        res = cut_over(store, old, new_path, online_state, max_lag=max_lag, sink_bind=sink_bind)
        ok = res.verification is not None and res.verification.ok
        result.acted.append(f"cut over {plan['table']} -> {plan['new_table']}: verify {'OLD == NEW' if ok else 'FAILED'}; " + " ".join(res.notes))
    for line in result.acted:
        say(f"act: {line}")
    state.setdefault("acted", []).extend(result.acted)
    _save(state_path, state)
    result.stopped_after = "act"
    return result
