"""Reads binlogd's binlog with python-mysql-replication's BinLogStreamReader
and prints every row event as one JSON line:
{"gtid": ..., "event": "write|update|delete", "schema": ..., "table": ...,
 "rows": [...]} (update rows are {"before": ..., "after": ...}).

Usage: read_rows.py PORT (position FILE POS | gtid SET) [--stop-after N]
       [--blocking]
Non-blocking by default: it stops at the end of the log. With --blocking
it follows the tail until it has printed N transactions (--stop-after).
"""
import datetime
import decimal
import json
import sys

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import GtidEvent, XidEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent


def plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (decimal.Decimal, datetime.date, datetime.datetime, datetime.time, datetime.timedelta)):
        return str(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def main():
    port = int(sys.argv[1])
    mode = sys.argv[2]
    args = sys.argv[3:]
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
