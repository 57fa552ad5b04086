"""Reads binlogd's binlog with python-mysql-replication's BinLogStreamReader
and prints every row event as one JSON line:
{"gtid": ..., "event": "write|update|delete", "schema": ..., "table": ...,
 "rows": [...]} (update rows are {"before": ..., "after": ...}).

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

import pymysql

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import GtidEvent, XidEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent


def plain(value):
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and len(value) > 64 and value == value[0] * len(value):
        # REPEAT('x', N) of the large transaction, summarised.
        return "%s*%d" % (value[0], len(value))
    if isinstance(value, (decimal.Decimal, datetime.date, datetime.datetime, datetime.time, datetime.timedelta)):
        return str(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
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


def stream_rows(port, mode, args):
    blocking = "--blocking" in args
    stop_after = None
    if "--stop-after" in args:
        stop_after = int(args[args.index("--stop-after") + 1])
    settings = {"host": "127.0.0.1", "port": port, "user": "root", "passwd": ""}
    options = dict(
        connection_settings=settings,
        server_id=100 + port % 1000,
        blocking=blocking,
        only_events=[GtidEvent, XidEvent, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        slave_heartbeat=1,
    )
    if mode == "position":
        options.update(log_file=args[0], log_pos=int(args[1]), resume_stream=True)
    else:
        options.update(auto_position=args[0])
    stream = BinLogStreamReader(**options)
    transactions = 0
    gtid = None
    try:
        for event in stream:
            if isinstance(event, GtidEvent):
                gtid = event.gtid
            elif isinstance(event, XidEvent):
                transactions += 1
                print(json.dumps({"commit": gtid}), flush=True)
                if stop_after is not None and transactions >= stop_after:
                    break
            else:
                kind = {WriteRowsEvent: "write", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}[type(event)]
                rows = []
                for row in event.rows:
                    if kind == "update":
                        rows.append({"before": plain(row["before_values"]), "after": plain(row["after_values"])})
                    else:
                        rows.append(plain(row["values"]))
                print(json.dumps({"gtid": gtid, "event": kind, "schema": event.schema, "table": event.table, "rows": rows}), flush=True)
    finally:
        stream.close()


if __name__ == "__main__":
    main()
