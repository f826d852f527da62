"""``keyshape autopilot``: from a hot table to a proven new design running live, in stages.

One module a stage, each a function with a typed result that the CLI and serve call:

- :mod:`.observed`  the observed load the stages read (serve's history or a bounded poll)
- :mod:`.diagnose`  verdict, pattern, cause, since when
- :mod:`.learn`     write/read rates, trend, per-region rates, the live sample decoded, WORKLOAD.toml
- :mod:`.advise`    advise's ranking with the current design scored beside
- :mod:`.predict`   the observed write stream replayed through a design; the choice
- :mod:`.prove`     scratch tables on the same cluster (opt-in)
- :mod:`.plan`      NEW's schema, create statements, the migrate command, time, disk, risks
- :mod:`.act`       the online migration started (``--apply``) or cut over (``--cutover``)
- :mod:`.safety`    the refusals
- :mod:`.run`       the stages in order, stop-after and the state file
"""

from keyshape.ops.autopilot.diagnose import Diagnosis, diagnose
from keyshape.ops.autopilot.learn import Learned, learn
from keyshape.ops.autopilot.observed import Observed
from keyshape.ops.autopilot.plan import Plan
from keyshape.ops.autopilot.predict import Replay, replay
from keyshape.ops.autopilot.run import STAGES, AutopilotRun, default_state_path, run

__all__ = ["STAGES", "AutopilotRun", "Diagnosis", "Learned", "Observed", "Plan", "Replay", "default_state_path", "diagnose", "learn", "replay", "run"]
