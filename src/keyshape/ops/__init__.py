"""Work on live tables: loading a workload and watching its regions (``live``)."""
