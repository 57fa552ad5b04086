#!/usr/bin/env bash
# Builds the harness (go-mysql pinned in go.mod and go.sum) and runs it
# against the binlogd binary given as $1. Prints `N passed, M failed`.
set -euo pipefail
binary="$(realpath "$1")"
cd "$(dirname "${BASH_SOURCE[0]}")"
go build -o harness .
exec ./harness "$binary"
