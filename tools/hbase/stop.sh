#!/usr/bin/env bash
# Thin wrapper: the logic lives in standalone.py (importable by the test fixture).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${KEYSHAPE_PYTHON:-$here/../../.venv/bin/python}"
[ -x "$py" ] || py=python3
exec "$py" "$here/standalone.py" stop "$@"
