#!/usr/bin/env bash
# Starts Phoenix 5.2.1 in connectionless mode as a line-oriented oracle (PhoenixOracle.java), after
# resolving its jars from Maven Central (cached in ~/.m2) and compiling it into run/ (gitignored).
# Prints READY when the first connection is up.
# Usage: tools/golden/phoenix/oracle.sh [JDBC-URL]   (default jdbc:phoenix:none: connectionless)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/run"
mkdir -p "$build"
if [[ ! -s "$build/classpath" ]]; then
  mvn -B -q -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$build/classpath" >&2
fi
cp="$(cat "$build/classpath")"
if [[ ! -f "$build/PhoenixOracle.class" || "$here/PhoenixOracle.java" -nt "$build/PhoenixOracle.class" ]]; then
  javac -nowarn -d "$build" -cp "$cp" "$here/PhoenixOracle.java" >&2
fi
# Connectionless (no URL, or jdbc:phoenix:none...): Phoenix's settings for a JVM without a cluster
# (connectionless/hbase-site.xml: no 5 s sleep after each CREATE INDEX) go first on the classpath.
case "${1:-jdbc:phoenix:none}" in
  jdbc:phoenix:none*) cp="$here/connectionless:$cp" ;;
esac
exec java -Xmx512m -Dlog4j2.level=OFF -Dlog4j.configurationFile=/dev/null -cp "$build:$cp" PhoenixOracle "$@" 2>/dev/null
