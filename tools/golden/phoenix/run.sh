#!/usr/bin/env bash
# Regenerates tests/data/phoenix_golden.json from Phoenix 5.2.1 itself (connectionless mode).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${KEYSHAPE_PYTHON:-$here/../../../.venv/bin/python}"
[ -x "$py" ] || py=python3
exec "$py" "$here/make_golden.py"
