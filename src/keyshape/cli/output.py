"""Where the reports moved: :mod:`keyshape.report.output` writes --json, --html and --png for every
command; this name stays for the command modules that import it from here."""

from __future__ import annotations

from keyshape.report.output import write_json, write_reports

__all__ = ["write_json", "write_reports"]
