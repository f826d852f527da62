"""A SparkSession for keyshape's jobs, and the one place that imports PySpark."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput
from keyshape.schema import KeySchema

INSTALL_HINT = "install the extra: pip install 'keyshape[spark]'"


def pyspark() -> Any:
    """The ``pyspark`` module, or a KeyshapeError saying how to install it."""
    try:
        import pyspark as module
    except ImportError:
        raise BadInput(f"the Spark engine needs PySpark, which is not installed; {INSTALL_HINT}") from None
    return module


def session(master: str | None = None, app_name: str = "keyshape", config: dict[str, str] | None = None) -> Any:
    """The active SparkSession, or a new one on ``master`` (default ``local[*]``) named
    ``app_name``, with the Spark settings in ``config`` (e.g. ``{"spark.executor.memory": "2g"}``).

    Python workers run this interpreter unless ``PYSPARK_PYTHON`` says otherwise (they need
    keyshape, numpy and pyarrow); a local master binds to the loopback address and has no UI.
    """
    pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = master or "local[*]"
    builder = SparkSession.builder.master(master).appName(app_name)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false")
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def as_schema(schema: KeySchema | str | Path) -> KeySchema:
    return schema if isinstance(schema, KeySchema) else KeySchema.load(schema)
