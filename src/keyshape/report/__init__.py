"""Reports of an analysis: ``terminal`` (rich tables and the live-table views), ``html``
(self-contained page; ``heatmap_html`` its interactive heat map), ``png`` (heat maps), ``advise``
(the advisor's ranked designs), and ``output``, whose ``write_reports`` writes the
JSON, HTML and PNG reports a command was asked for. Import the submodule you need; ``png`` and
``html`` load matplotlib.
"""

__all__ = ["advise", "heatmap_html", "html", "output", "png", "terminal"]
