#!/usr/bin/env bash
# Regenerates tests/data/hbase_golden.json from the real HBase jars (needs a JDK and the jars that
# tools/hbase fetches into ~/.m2). Usage: tools/golden/run.sh > tests/data/hbase_golden.json
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp="$(find "${M2_REPO:-$HOME/.m2/repository}" -name '*.jar' | tr '\n' ':')"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
javac -nowarn -d "$out" -cp "$cp" "$here/GoldenVectors.java" >&2
java -cp "$out:$cp" GoldenVectors
