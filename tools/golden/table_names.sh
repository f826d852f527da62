#!/usr/bin/env bash
# Regenerates tests/data/table_names_golden.json from TableNames.java run against the REAL
# hbase-common jar of the test server's default line (tools/hbase/lines/2.6.4/lib, fetched from
# Maven Central by tools/hbase/fetch.sh). Never edit the JSON by hand.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lib="$here/../hbase/lines/2.6.4/lib"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cp="$lib/*"
javac -nowarn -encoding UTF-8 -d "$out" -cp "$cp" "$here/TableNames.java" >&2
java -cp "$out:$cp" TableNames > "$out/table_names_golden.json"
mv "$out/table_names_golden.json" "$here/../../tests/data/"
echo "wrote tests/data/table_names_golden.json" >&2
