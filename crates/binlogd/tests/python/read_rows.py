"""Reads binlogd's binlog with python-mysql-replication's BinLogStreamReader
and prints every row event as one JSON line:
{"gtid": ..., "event": "write|update|partial_update|delete", "schema": ...,
 "table": ..., "rows": [...]} (update rows are {"before": ..., "after": ...};
a JSON column a Partial_update_rows event carries as diffs is
{"diffs": [[operation, path, value], ...]}).

Usage: read_rows.py PORT (position FILE POS | gtid SET | nochecksum)
       [--stop-after N] [--blocking]
A refused dump prints {"error": code, "message": text}; `nochecksum`
dumps without declaring @master_binlog_checksum (MySQL refuses that).
Non-blocking by default: it stops at the end of the log. With --blocking
it follows the tail until it has printed N transactions (--stop-after).
"""
import datetime
import decimal
import json
import struct
import sys
import time

import pymysql

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import GtidEvent, XidEvent
from pymysqlreplication.json_binary import JsonDiff
from pymysqlreplication.row_event import DeleteRowsEvent, PartialUpdateRowsEvent, UpdateRowsEvent, WriteRowsEvent


def plain(value):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and len(value) > 64 and value == value[0] * len(value):
        # REPEAT('x', N) of the large transaction, summarised.
        return "%s*%d" % (value[0], len(value))
    if isinstance(value, (decimal.Decimal, datetime.date, datetime.datetime, datetime.time, datetime.timedelta)):
        return str(value)
    if isinstance(value, dict):
        # A JSON document's keys come as bytes.
        return {plain(key): plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, JsonDiff):
        return {"diffs": [[value.op.name.upper(), plain(value.path), plain(value.value)]]}
    if isinstance(value, (set, frozenset)):
        # A SET column's members.
        return sorted(plain(item) for item in value)
    return value


def dump_without_checksum(port):
    connection = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
    # COM_BINLOG_DUMP: position 4, flags 0, server id 77, file binlog.000001.
    packet = bytes([0x12]) + struct.pack("<IHI", 4, 0, 77) + b"binlog.000001"
    connection._write_bytes(struct.pack("<i", len(packet))[:3] + b"\x00" + packet)
    connection._next_seq_id = 1
    while True:
        packet = connection._read_packet()
        if not packet.is_ok_packet():
            continue


def main():
    port = int(sys.argv[1])
    mode = sys.argv[2]
    try:
        if mode == "nochecksum":
            dump_without_checksum(port)
        else:
            stream_rows(port, mode, sys.argv[3:])
    except pymysql.err.MySQLError as error:
        print(json.dumps({"error": error.args[0], "message": error.args[1]}), flush=True)


class Executed:
    """The GTIDs a reader has seen commit, as MySQL's text form: what it
    sends when it reconnects with auto-position."""

    def __init__(self, text):
        self.gnos = {}
        for part in filter(None, text.split(",")):
            uuid, *intervals = part.strip().split(":")
            for interval in intervals:
                start, _, end = interval.partition("-")
                self.gnos.setdefault(uuid, set()).update(range(int(start), int(end or start) + 1))

    def add(self, gtid):
        uuid, gno = gtid.split(":")
        self.gnos.setdefault(uuid, set()).add(int(gno))

    def text(self):
        parts = []
        for uuid, gnos in sorted(self.gnos.items()):
            ordered = sorted(gnos)
            intervals = []
            start = previous = ordered[0]
            for gno in ordered[1:] + [None]:
                if gno is None or gno != previous + 1:
                    intervals.append("%d-%d" % (start, previous) if start != previous else "%d" % start)
                    start = gno
                previous = gno
            parts.append(":".join([uuid] + intervals))
        return ",".join(parts)


def stream_rows(port, mode, args):
    """With --blocking and auto-position, a lost source (restart) is
    reconnected with the GTIDs seen so far, as a CDC consumer that keeps
    its position does: nothing is read twice or skipped."""
    blocking = "--blocking" in args
    stop_after = None
    if "--stop-after" in args:
        stop_after = int(args[args.index("--stop-after") + 1])
    executed = Executed(args[0]) if mode == "gtid" else None
    transactions = 0
    deadline = time.time() + 120
    while True:
        try:
            done = stream_once(port, mode, args, blocking, stop_after, executed, transactions)
            transactions = done
            return
        except (pymysql.err.OperationalError, pymysql.err.InterfaceError, ConnectionError) as error:
            if not (blocking and executed is not None) or time.time() > deadline:
                raise
            if error.args and error.args[0] not in (2003, 2006, 2013, 0):
                raise
            transactions = stream_once.transactions
            time.sleep(0.2)


def stream_once(port, mode, args, blocking, stop_after, executed, transactions):
    stream_once.transactions = transactions
    settings = {"host": "127.0.0.1", "port": port, "user": "root", "passwd": ""}
    options = dict(
        connection_settings=settings,
        server_id=100 + port % 1000,
        blocking=blocking,
        only_events=[GtidEvent, XidEvent, WriteRowsEvent, UpdateRowsEvent, PartialUpdateRowsEvent, DeleteRowsEvent],
        slave_heartbeat=1,
    )
    if mode == "position":
        options.update(log_file=args[0], log_pos=int(args[1]), resume_stream=True)
    else:
        options.update(auto_position=executed.text())
    stream = BinLogStreamReader(**options)
    gtid = None
    pending = []
    try:
        for event in stream:
            if isinstance(event, GtidEvent):
                gtid = event.gtid
                pending = []
            elif isinstance(event, XidEvent):
                # Printed per transaction, at its commit: a transaction cut
                # by a lost connection is read again whole after it.
                transactions += 1
                stream_once.transactions = transactions
                for line in pending:
                    print(line)
                pending = []
                print(json.dumps({"commit": gtid}), flush=True)
                if executed is not None:
                    executed.add(gtid)
                    # The library reconnects by itself after a lost
                    # connection, with this set.
                    stream.auto_position = executed.text()
                if stop_after is not None and transactions >= stop_after:
                    break
            else:
                kind = {
                    WriteRowsEvent: "write",
                    UpdateRowsEvent: "update",
                    PartialUpdateRowsEvent: "partial_update",
                    DeleteRowsEvent: "delete",
                }[type(event)]
                rows = []
                for row in event.rows:
                    if kind in ("update", "partial_update"):
                        rows.append({"before": plain(row["before_values"]), "after": plain(row["after_values"])})
                    else:
                        rows.append(plain(row["values"]))
                pending.append(json.dumps({"gtid": gtid, "event": kind, "schema": event.schema, "table": event.table, "rows": rows}))
    finally:
        stream.close()
    return transactions


if __name__ == "__main__":
    main()
