#!/usr/bin/env bash
# Builds the harness with Maven (Kafka, Connect and Debezium pinned in
# pom.xml) and runs it against the binlogd binary given as $1: it starts a
# KRaft broker and a Connect worker of its own on 127.0.0.1 and prints
# `N passed, M failed`.
set -euo pipefail
binary="$(realpath "$1")"
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -q -B compile dependency:build-classpath
exec java -Dbinlogd="$binary" -cp "target/classes:$(cat target/classpath.txt)" binlogd.interop.kafkaconnect.Harness
