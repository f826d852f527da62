#!/usr/bin/env bash
# Thin wrapper: the command line is hbasectl.py; the logic lives in standalone.py and cluster.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${KEYSHAPE_PYTHON:-$here/../../.venv/bin/python}"
[ -x "$py" ] || py=python3
exec "$py" "$here/hbasectl.py" fetch "$@"
