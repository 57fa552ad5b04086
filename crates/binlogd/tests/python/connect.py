"""Logs in to binlogd with pymysql and prints one JSON line: the
connection's Ssl_version and Ssl_cipher, or the error pymysql got.

Usage: connect.py PORT USER PASSWORD (plain | tls CA [CERT KEY])
       [--plugin caching_sha2_password|mysql_native_password] [--rsa PUBLIC_KEY]
`plain` turns TLS off (pymysql otherwise takes TLS when offered); `tls`
verifies the server's certificate against CA and its name (127.0.0.1).
"""
import json
import sys

import pymysql


def main():
    port, user, password, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    rest = sys.argv[5:]
    options = {}
    if "--rsa" in rest:
        options["server_public_key"] = open(rest[rest.index("--rsa") + 1], "rb").read()
    if mode == "plain":
        options["ssl_disabled"] = True
    else:
        ssl = {"ca": rest[0], "check_hostname": True}
        if len(rest) >= 3 and not rest[1].startswith("--"):
            ssl["cert"], ssl["key"] = rest[1], rest[2]
        options["ssl"] = ssl
    try:
        connection = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, **options)
    except pymysql.err.MySQLError as error:
        code = error.args[0] if error.args and isinstance(error.args[0], int) else 0
        print(json.dumps({"error": code, "message": str(error)}))
        return
    except Exception as error:  # TLS failures come as ssl.SSLError
        print(json.dumps({"error": 0, "message": f"{type(error).__name__}: {error}"}))
        return
    with connection.cursor() as cursor:
        cursor.execute("SHOW SESSION STATUS LIKE 'Ssl_%'")
        status = dict(cursor.fetchall())
        cursor.execute("SELECT CURRENT_USER()")
        (current_user,) = cursor.fetchone()
    connection.close()
    print(json.dumps({"version": status.get("Ssl_version", ""), "cipher": status.get("Ssl_cipher", ""), "user": current_user}))


main()
