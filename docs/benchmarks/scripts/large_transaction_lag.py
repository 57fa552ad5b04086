#!/usr/bin/env python3
"""Time from a large transaction's commit on a binlogd source to its commit
on a binlogd replica, with the replica streaming spilled transactions to its
workers (binlogd_replica_stream_spilled=ON) and not (OFF).

    large_transaction_lag.py BINLOGD DIR [--sizes-mib 256,1024] [--rounds 2]

Starts a source and a replica (`BINLOGD serve`, 127.0.0.1, ports the servers
pick) under DIR, replicating by GTID auto-position with the default 128 MiB
memory relay log (16 MiB spill threshold). For each size and round, each
mode: the replica's threads restart with the mode, a fresh table, then one
transaction of SIZE one-MiB rows on the source. "lag" runs from the source's
COMMIT returning to the replica's gtid_executed holding its GTID, "received"
to its Retrieved_Gtid_Set holding it (the receiver has its last event;
both polled every 5 ms). Both servers are stopped by PID; DIR/source,
DIR/replica and their logs are removed at the end. Needs pymysql.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pymysql

ENGINE_MEMORY = "--binlogd-engine-memory-limit=4294967296"
ROW_BYTES = 1 << 20


def start(binlogd, datadir, options):
    log_path = datadir + ".log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [binlogd, "serve", "--datadir", datadir, "--port", "0", "--bind=127.0.0.1", ENGINE_MEMORY] + options,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        text = open(log_path, errors="replace").read()
        found = re.search(r"ready for connections.*address=\S+:(\d+)", text)
        if found:
            return process, int(found.group(1))
        if process.poll() is not None:
            sys.exit(f"{datadir}: binlogd serve exited: {text}")
        time.sleep(0.05)
    sys.exit(f"{datadir}: not ready after 60 s")


def connect(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)


def value(connection, sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return row[0] if row else None


def execute(connection, *statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def executed(connection):
    return value(connection, "SELECT @@global.gtid_executed").replace("\n", "")


def retrieved(connection):
    with connection.cursor(pymysql.cursors.DictCursor) as cursor:
        cursor.execute("SHOW REPLICA STATUS")
        return cursor.fetchone()["Retrieved_Gtid_Set"].replace("\n", "")


def wait_for(replica, wanted, timeout_s=1800):
    """When the replica's receiver had all of `wanted`, and when its
    applier committed it (monotonic seconds)."""
    deadline = time.monotonic() + timeout_s
    received = None
    while True:
        if received is None and retrieved(replica) == wanted:
            received = time.monotonic()
        if executed(replica) == wanted:
            now = time.monotonic()
            return received or now, now
        if time.monotonic() > deadline:
            sys.exit(f"the replica did not reach {wanted}")
        time.sleep(0.005)


def status_number(connection, name):
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW GLOBAL STATUS LIKE '{name}'")
        return int(cursor.fetchone()[1])


def measure(source, replica, size_mib, stream):
    execute(replica, "STOP REPLICA", f"SET GLOBAL binlogd_replica_stream_spilled = {'ON' if stream else 'OFF'}", "START REPLICA")
    execute(source, "DROP TABLE IF EXISTS big.t", "CREATE TABLE big.t (id INT NOT NULL, v LONGTEXT, PRIMARY KEY (id))")
    wait_for(replica, executed(source))
    streamed_before = status_number(replica, "Replica_relay_log_streamed_transactions_total")
    execute(source, "BEGIN")
    for row in range(size_mib):
        execute(source, f"INSERT INTO big.t VALUES ({row}, REPEAT('{chr(65 + row % 26)}', {ROW_BYTES}))")
    commit_started = time.monotonic()
    execute(source, "COMMIT")
    committed = time.monotonic()
    replica_received, replica_committed = wait_for(replica, executed(source))
    streamed = status_number(replica, "Replica_relay_log_streamed_transactions_total") - streamed_before
    return committed - commit_started, replica_received - committed, replica_committed - committed, streamed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binlogd")
    parser.add_argument("dir")
    parser.add_argument("--sizes-mib", default="256,1024")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    source_dir, replica_dir = os.path.join(args.dir, "source"), os.path.join(args.dir, "replica")
    processes = []
    try:
        source_process, source_port = start(args.binlogd, source_dir, [])
        processes.append(source_process)
        replica_process, replica_port = start(args.binlogd, replica_dir, ["--server-id=2"])
        processes.append(replica_process)
        source, replica = connect(source_port), connect(replica_port)
        execute(source, "CREATE USER 'repl'@'%' IDENTIFIED BY 'repl-pw'", "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'",
                "CREATE DATABASE big")
        execute(replica, f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source_port}, SOURCE_USER='repl', "
                "SOURCE_PASSWORD='repl-pw', SOURCE_AUTO_POSITION=1, SOURCE_CONNECT_RETRY=1", "START REPLICA")
        print("size_mib,stream,round,source_commit_s,received_s,lag_s,streamed")
        for size_mib in [int(size) for size in args.sizes_mib.split(",")]:
            for round_number in range(1, args.rounds + 1):
                for stream in (False, True):
                    commit_s, received_s, lag_s, streamed = measure(source, replica, size_mib, stream)
                    print(f"{size_mib},{'ON' if stream else 'OFF'},{round_number},{commit_s:.2f},{received_s:.2f},{lag_s:.2f},{streamed}",
                          flush=True)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=120)
        for path in (source_dir, replica_dir):
            shutil.rmtree(path, ignore_errors=True)
            if os.path.exists(path + ".log"):
                os.remove(path + ".log")


if __name__ == "__main__":
    main()
