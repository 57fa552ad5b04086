"""Reads binlogd's binlog from its start with python-mysql-replication's
BinLogStreamReader and prints every row image of one table as a JSON line
{"event": "write|update|delete", "image": "before|after|row", "values":
{...}} with binary values (GEOMETRY, BLOB) as hex, so bytes compare
exactly.

Usage: read_hex_rows.py PORT FILE TABLE
"""
import json
import sys

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent


def plain(value):
    if isinstance(value, bytes):
        return value.hex()
    return value


def main():
    port, log_file, table = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": port, "user": "root", "passwd": ""},
        server_id=200 + port % 1000,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        log_file=log_file,
        log_pos=4,
        resume_stream=True,
    )
    kinds = {WriteRowsEvent: "write", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}
    try:
        for event in stream:
            if event.table != table:
                continue
            for row in event.rows:
                images = [("before", row["before_values"]), ("after", row["after_values"])] if "before_values" in row else [("row", row["values"])]
                for image, values in images:
                    values = {name: plain(value) for name, value in values.items()}
                    print(json.dumps({"event": kinds[type(event)], "image": image, "values": values}), flush=True)
    finally:
        stream.close()


if __name__ == "__main__":
    main()
