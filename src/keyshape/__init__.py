"""keyshape: design HBase row keys and pre-split tables, and prove the load spreads evenly."""

__version__ = "0.1.0"
