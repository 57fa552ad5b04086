#!/usr/bin/env bash
# The README's example of binlogd's changes fanned out through Kafka:
# starts binlogd (the binary given as $1), a one-node KRaft Kafka broker
# and a Kafka Connect worker running Debezium's MySQL connector, all on
# 127.0.0.1 with fresh temporary data, prints how to reach each, and
# prints every change record as it reaches Kafka. Ctrl-C stops them all.
set -euo pipefail
binary="$(realpath "$1")"
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -q -B compile dependency:build-classpath
exec java -Dbinlogd="$binary" -cp "target/classes:$(cat target/classpath.txt)" binlogd.interop.kafkaconnect.Example
