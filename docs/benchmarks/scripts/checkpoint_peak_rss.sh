#!/bin/bash
# The server's peak resident set (VmHWM) after a checkpoint of a 1 GiB
# table: one transaction of 1024 one-MiB rows, then the interval
# checkpoint (every 60 s) copies the table into checkpoint.N.
#
# usage: checkpoint_peak_rss.sh BINLOGD PORT [DIR]   (needs the mariadb client)
set -eu
binary=$1; port=$2; dir=${3:-/tmp/checkpoint-peak-rss-$port}
rm -rf "$dir"; mkdir -p "$dir"
"$binary" serve --datadir "$dir/data" --port "$port" --binlogd-engine-memory-limit=4294967296 > "$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do mariadb -h127.0.0.1 -P"$port" -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
{
  echo "CREATE DATABASE big; CREATE TABLE big.t (id INT NOT NULL, v LONGTEXT, PRIMARY KEY (id)); BEGIN;"
  for i in $(seq 0 1023); do echo "INSERT INTO big.t VALUES ($i, REPEAT('a', 1048576));"; done
  echo "COMMIT;"
} | mariadb -h127.0.0.1 -P"$port" -uroot
sleep 65
checkpoints=$(find "$dir/data" -name 'checkpoint.*' -printf '%f %s bytes ' )
peak_mib=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
echo "$(basename "$binary"): peak RSS ${peak_mib} MiB after 1 GiB of rows and a checkpoint ($checkpoints)"
