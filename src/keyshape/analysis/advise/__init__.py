"""``keyshape advise``: which row-key design to choose, predicted from a sample and a workload.

- :mod:`.spec`        the workload file (write stream, access patterns, horizon, cluster)
- :mod:`.sample`      the sample of records, typed, in write order
- :mod:`.candidates`  the designs searched (orders, prefixes, reverse time, index tables, splits)
- :mod:`.costs`       the cost constants and what one read of a pattern costs
- :mod:`.score`       one design scored with keyshape's analyzer and split simulation
- :mod:`.ranking`     Pareto fronts and the reasons
- :mod:`.advise`      the whole run
- :mod:`.calibrate`   the cost constants fitted on a real cluster (``--calibrate``), saved and read back
- :mod:`.prove`       the designs loaded into a real HBase and measured against the prediction (``--prove``)
- :mod:`.preflight`   a target design placed on the source's real keys (before ``create``/``migrate``)
"""

from keyshape.analysis.advise.advise import Advice, advise, hand_design
from keyshape.analysis.advise.costs import CostModel
from keyshape.analysis.advise.ranking import dominates, pareto_fronts
from keyshape.analysis.advise.spec import AdviseError, AdviseSpec, Pattern, load_spec, parse_spec

__all__ = [
    "Advice",
    "AdviseError",
    "AdviseSpec",
    "CostModel",
    "Pattern",
    "advise",
    "dominates",
    "hand_design",
    "load_spec",
    "pareto_fronts",
    "parse_spec",
]
