#!/usr/bin/env bash
# Thin wrapper: the command line is hbasectl.py; the logic lives in standalone.py and cluster.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${KEYSHAPE_PYTHON:-$here/../../.venv/bin/python}"
[ -x "$py" ] || py=python3
# --kerberos (or --secure): a throw-away MIT KDC and a Kerberized HBase with authorization and TLS
# (tools/hbase/secure.py; run folder tools/hbase/run/secure; stop with secure.py stop).
# `--version V` after it picks the HBase line (standalone.LINES), as for a plain start.
case "${1:-}" in
  --kerberos|--secure|--tls)
    if [ "${2:-}" = "--version" ] && [ -n "${3:-}" ]; then export KEYSHAPE_HBASE_VERSION="$3"; fi
    exec "$py" "$here/secure.py" start ;;
esac
exec "$py" "$here/hbasectl.py" start "$@"
