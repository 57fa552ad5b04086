//! `binlog_storage_engine` through SQL, as the `mariadb` client sees it:
//! the mode a server started with in `SELECT @@...` and SHOW VARIABLES,
//! MySQL's read-only error for SET, and the startup note that
//! `sync_binlog` is ignored in `engine` mode.

mod support;

use support::ServerProcess;

#[test]
fn binlog_storage_engine_is_shown_and_read_only() {
    let engine = ServerProcess::start_with(&["--binlog-storage-engine=engine", "--sync-binlog=0"]);
    assert_eq!(engine.query(None, "SELECT @@binlog_storage_engine, @@global.binlog_storage_engine"), "engine\tengine\n");
    assert_eq!(engine.query(None, "SHOW VARIABLES LIKE 'binlog_storage_engine'"), "binlog_storage_engine\tengine\n");
    assert_eq!(engine.query(None, "SHOW GLOBAL VARIABLES LIKE 'binlog_storage%'"), "binlog_storage_engine\tengine\n");
    for sql in ["SET GLOBAL binlog_storage_engine = ''", "SET @@global.binlog_storage_engine = 'engine'", "SET binlog_storage_engine = ''"]
    {
        let error = engine.error(None, sql);
        assert!(
            error.contains("ERROR 1238 (HY000)") && error.contains("Variable 'binlog_storage_engine' is a read only variable"),
            "{sql}: {error}"
        );
    }
    assert_eq!(engine.query(None, "SELECT @@binlog_storage_engine"), "engine\n", "a refused SET changes nothing");
    let log = std::fs::read_to_string(&engine.log).unwrap();
    assert!(log.contains("sync_binlog is ignored"), "startup note missing:\n{log}");

    // The default (and the `file` alias) is MariaDB's empty value.
    let file = ServerProcess::start_with(&["--binlog_storage_engine=file"]);
    assert_eq!(file.query(None, "SELECT @@binlog_storage_engine = '', @@binlog_storage_engine IS NULL"), "1\t0\n");
    assert_eq!(file.query(None, "SHOW VARIABLES LIKE 'binlog_storage_engine'"), "binlog_storage_engine\t\n");
    let log = std::fs::read_to_string(&file.log).unwrap();
    assert!(!log.contains("sync_binlog is ignored"), "the note is for engine mode only:\n{log}");
}

/// The engine-mode writer appends to the files behind the commit path;
/// statements that show the binlog wait for it, so a session sees its own
/// commit there at once, even with `innodb_flush_log_at_trx_commit = 2`
/// (where the writer would otherwise wait up to a second for redo's
/// background sync), and FLUSH BINARY LOGS closes a file holding every
/// commit that returned before it.
#[test]
fn a_session_sees_its_commits_in_the_binlog_at_once() {
    let server = ServerProcess::start_with(&["--binlog-storage-engine=engine", "--innodb-flush-log-at-trx-commit=2"]);
    let uuid = server.query(None, "SELECT @@server_uuid").trim().to_string();
    for round in 1..=3 {
        let shown = server.query(
            None,
            &format!(
                "CREATE DATABASE d{round}; CREATE TABLE d{round}.t (id INT NOT NULL, PRIMARY KEY (id)); INSERT INTO d{round}.t VALUES ({round});
                 SELECT @@gtid_executed; SHOW BINARY LOG STATUS; FLUSH BINARY LOGS;"
            ),
        );
        let gtids = format!("{uuid}:1-{}", 3 * round);
        let mut lines = shown.lines();
        assert_eq!(lines.next(), Some(gtids.as_str()), "{shown}");
        assert!(lines.next().unwrap().ends_with(&format!("\t{gtids}")), "{shown}");
        // The closed file ends with this round's insert, then the Rotate.
        let file = format!("binlog.{round:06}");
        let events = server.query(None, &format!("SHOW BINLOG EVENTS IN '{file}'"));
        let types: Vec<&str> = events.lines().map(|line| line.split('\t').nth(2).unwrap()).collect();
        assert_eq!(types[types.len() - 4..], ["Table_map", "Write_rows", "Xid", "Rotate"], "{file}:\n{events}");
    }
}

/// RESET MASTER (and its 8.4 name) on an engine-mode server: the log
/// starts again at binlog.000001 and GTID 1, even with commits still
/// queued for the writer when it runs (flush 2 keeps them there); after a
/// kill -9 (redo replay passes the GTID reset record) and after a clean
/// restart, nothing from before the reset comes back and new commits go on
/// from where the new log is.
#[test]
fn reset_master_in_engine_mode_survives_kill_and_restart() {
    let mut server = ServerProcess::start_with(&["--binlog-storage-engine=engine", "--innodb-flush-log-at-trx-commit=2"]);
    let uuid = server.query(None, "SELECT @@server_uuid").trim().to_string();
    let mut old =
        String::from("CREATE DATABASE r; CREATE TABLE r.t (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id)); FLUSH BINARY LOGS;");
    for id in 1..=40 {
        old.push_str(&format!("INSERT INTO r.t VALUES ({id}, 'old');"));
    }
    old.push_str("RESET MASTER; SELECT @@gtid_executed = '', @@gtid_purged = '';");
    assert_eq!(server.query(None, &old), "1\t1\n");
    assert_eq!(
        server.query(None, "SHOW BINARY LOGS").lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(),
        ["binlog.000001"]
    );
    server.query(None, "INSERT INTO r.t VALUES (41, 'new')");
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{uuid}:1\n"));

    let gtids_in_binlog = |server: &ServerProcess| -> Vec<String> {
        let mut gtids = Vec::new();
        for line in server.query(None, "SHOW BINARY LOGS").lines() {
            let file = line.split('\t').next().unwrap();
            for event in server.query(None, &format!("SHOW BINLOG EVENTS IN '{file}'")).lines() {
                if let Some(gtid) = event.split('\t').nth(5).and_then(|info| info.strip_prefix("SET @@SESSION.GTID_NEXT= ")) {
                    gtids.push(gtid.trim_matches('\'').to_string());
                }
            }
        }
        gtids
    };
    assert_eq!(gtids_in_binlog(&server), [format!("{uuid}:1")]);

    // Redo still holds the 40 old commits, then the reset record, then the
    // new one: replay must rebuild only what follows the reset.
    server.kill();
    server.start_again(&[]);
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{uuid}:1\n"));
    assert_eq!(gtids_in_binlog(&server), [format!("{uuid}:1")]);
    assert_eq!(server.query(None, "SELECT COUNT(*), SUM(v = 'new') FROM r.t"), "41\t1\n", "RESET keeps the data");
    server.query(None, "RESET BINARY LOGS AND GTIDS; INSERT INTO r.t VALUES (42, 'newer'); UPDATE r.t SET v = 'newest' WHERE id = 1");
    assert_eq!(gtids_in_binlog(&server), [format!("{uuid}:1"), format!("{uuid}:2")]);

    server.restart();
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{uuid}:1-2\n"));
    assert_eq!(gtids_in_binlog(&server), [format!("{uuid}:1"), format!("{uuid}:2")]);
    server.query(None, "INSERT INTO r.t VALUES (43, 'after restart')");
    assert_eq!(server.query(None, "SELECT @@gtid_executed"), format!("{uuid}:1-3\n"));
    assert_eq!(
        server.query(None, "SELECT id, v FROM r.t WHERE id IN (1, 41, 42, 43) ORDER BY id"),
        "1\tnewest\n41\tnew\n42\tnewer\n43\tafter restart\n"
    );
}

/// SHOW GLOBAL STATUS counts the commit path's fsyncs (what `bench
/// side-by-side` reports per transaction): one after another, each
/// commit syncs redo in both modes; classic files also sync the binlog at
/// every commit (`sync_binlog = 1`), engine mode never does (no rotation
/// or checkpoint in between).
#[test]
fn fsync_counters_show_what_each_mode_syncs() {
    let counters = |server: &ServerProcess| -> (u64, u64) {
        let status = server.query(None, "SHOW GLOBAL STATUS LIKE '%fsyncs'");
        let value = |name: &str| -> u64 {
            let line = status.lines().find(|line| line.starts_with(&format!("{name}\t"))).unwrap_or_else(|| panic!("{name} in:\n{status}"));
            line.split('\t').nth(1).unwrap().parse().unwrap()
        };
        (value("Innodb_os_log_fsyncs"), value("binlogd_binlog_fsyncs"))
    };
    const COMMITS: u64 = 20;
    let inserts: String = (1..=COMMITS).map(|id| format!("INSERT INTO f.t VALUES ({id});")).collect();
    for (options, binlog_syncs_per_commit) in [(&["--binlog-storage-engine=engine"][..], 0), (&[][..], 1)] {
        let server = ServerProcess::start_with(options);
        server.query(None, "CREATE DATABASE f; CREATE TABLE f.t (id INT NOT NULL, PRIMARY KEY (id))");
        let (redo_before, binlog_before) = counters(&server);
        server.query(None, &inserts);
        let (redo_after, binlog_after) = counters(&server);
        assert!(redo_after - redo_before >= COMMITS, "{options:?}: redo fsyncs {redo_before} -> {redo_after}");
        assert_eq!(binlog_after - binlog_before, COMMITS * binlog_syncs_per_commit, "{options:?}: binlog fsyncs");
    }
}
