"""Reads binlogd's binlog from its start with python-mysql-replication's
BinLogStreamReader and prints, for every rows event of the given tables,
a JSON line {"table": ..., "event": "write|update|delete", "rows": n,
"partition_id": id, "source_partition_id": id or null}: the partition
information of the event's extra row info as the library decodes it.

Usage: read_partition_ids.py PORT FILE TABLE...
"""
import json
import sys

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent


def main():
    port, log_file, tables = int(sys.argv[1]), sys.argv[2], set(sys.argv[3:])
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": port, "user": "root", "passwd": ""},
        server_id=300 + port % 1000,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        log_file=log_file,
        log_pos=4,
        resume_stream=True,
    )
    kinds = {WriteRowsEvent: "write", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}
    try:
        for event in stream:
            if event.table not in tables:
                continue
            line = {
                "table": event.table,
                "event": kinds[type(event)],
                "rows": len(event.rows),
                "partition_id": getattr(event, "partition_id", None),
                "source_partition_id": getattr(event, "source_partition_id", None),
            }
            print(json.dumps(line), flush=True)
    finally:
        stream.close()


if __name__ == "__main__":
    main()
