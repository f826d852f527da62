#!/usr/bin/env bash
# Regenerates the golden vectors from the REAL upstream jars on Maven Central (needs a JDK and mvn;
# the jars land in ~/.m2 via pom.xml beside this script, one profile per upstream):
#   tests/data/hbase_golden.json   GoldenVectors.java  hbase-server/hbase-common/hbase-client 2.6.4-hadoop3
#                                                      (the default line of the test server, tools/hbase)
#   tests/data/salt_golden.json    UpstreamSalts.java  phoenix-core-client 5.2.1, opentsdb 2.4.1,
#                                                      hbasewd 0.1.0
#   tests/data/classic_golden.json ClassicKeys.java    the JDK alone: the hand-written Java key
#                                                      functions (MD5, hashCode & 0x7FFF, %02d, CRC32)
# Usage: tools/golden/run.sh   (from anywhere; never edit the JSON by hand)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="$here/../../tests/data"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

classpath() {  # resolve (and download if needed) one profile's jars; print its classpath
  mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -P "$1" dependency:build-classpath -Dmdep.outputFile="$out/cp-$1" >&2
  cat "$out/cp-$1"
}

hbase_cp="$(classpath hbase)"
javac -nowarn -d "$out" -cp "$hbase_cp" "$here/GoldenVectors.java" >&2
java -cp "$out:$hbase_cp" GoldenVectors > "$out/hbase_golden.json"

javac -nowarn -d "$out" "$here/ClassicKeys.java" >&2
java -cp "$out" ClassicKeys > "$out/classic_golden.json"

javac -nowarn -d "$out" "$here/UpstreamSalts.java" >&2  # reflection only: compiles on the JDK alone
{
  sep="{"
  for upstream in phoenix opentsdb hbasewd; do
    printf '%s\n  "%s": ' "$sep" "$upstream"
    java -cp "$out:$(classpath "$upstream")" UpstreamSalts "$upstream" 2>"$out/$upstream.log" \
      || { cat "$out/$upstream.log" >&2; exit 1; }
    sep=","
  done
  printf '\n}\n'
} > "$out/salt_golden.json"

mv "$out/hbase_golden.json" "$out/salt_golden.json" "$out/classic_golden.json" "$data/"
echo "wrote $data/hbase_golden.json, salt_golden.json and classic_golden.json" >&2
