"""Work on live tables, each workflow callable from Python (the CLI only parses and prints):
``load`` (write a workload, follow its regions, judge it beside the prediction), ``watch`` (poll a
table's region loads into a live heat map), ``sample`` (judge a live table from its sampled keys),
``splitplan`` (plan and apply splits), ``migrate`` / ``online`` (re-key a table offline or
online), ``verify`` (compare the old and new tables), ``migration`` (``keyshape migrate`` in one
call: preflight, copy, verify and the exit rules as a typed result); ``live``, ``liveheat`` and ``split_history``
are their shared parts; ``live_notes`` is where a kind of schema registers what its live analysis
adds. Import the module you need: ``from keyshape.ops.load import load_table``.
"""

__all__ = [
    "live",
    "live_notes",
    "liveheat",
    "load",
    "migrate",
    "migrate_online",
    "migration",
    "online",
    "sample",
    "split_history",
    "splitplan",
    "verify",
    "watch",
]
