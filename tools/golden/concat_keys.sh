#!/usr/bin/env bash
# Regenerates tests/data/concat_golden.json from ConcatKeys.java run against the REAL hbase-common
# jar from Maven Central (the `hbase` profile of pom.xml). Never edit the JSON by hand.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -P hbase dependency:build-classpath -Dmdep.outputFile="$out/cp" >&2
cp="$(cat "$out/cp")"
javac -nowarn -d "$out" -cp "$cp" "$here/ConcatKeys.java" >&2
java -cp "$out:$cp" ConcatKeys > "$out/concat_golden.json"
mv "$out/concat_golden.json" "$here/../../tests/data/"
echo "wrote tests/data/concat_golden.json" >&2
