//! The workload the crash-point tests run on simulated storage: sessions
//! commit random transactions while a background thread takes
//! checkpoints and runs a DDL now and then, until the sessions are done or
//! the armed point freezes the storage.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use binlog_format::Gtid;
use database::{Database, DatabaseConfig};
use parking_lot::Mutex;
use rand::SeedableRng;
use storage::SimStorage;

use super::{context, create_schema, given_transaction, random_transaction, Attempt, DB};

/// A crash point of one of the three registries.
#[derive(Debug, Clone, Copy)]
pub enum Point {
    Database(&'static str),
    Binlog(&'static str),
    Redo(&'static str),
}

impl Point {
    pub fn name(self) -> &'static str {
        match self {
            Point::Database(name) | Point::Binlog(name) | Point::Redo(name) => name,
        }
    }
}

pub const SESSIONS: u32 = 4;

pub struct Workload {
    /// Armed to freeze the storage at its `skip`-th passage; `None` runs
    /// to the end.
    pub point: Option<Point>,
    pub skip: u64,
    pub seed: u64,
    pub transactions_per_session: u32,
    /// The background thread takes checkpoints (DDL runs either way).
    pub checkpoints: bool,
}

pub struct Outcome {
    /// GTIDs of the commits that returned Ok.
    pub acknowledged: BTreeSet<Gtid>,
    pub fired: bool,
}

/// Opens a database with `config` (on `storage`), builds the schema, arms
/// the point and runs the workload. When an armed point did not fire the
/// database is closed cleanly; without a point it is left open, so the
/// storage's crash images hold whatever a crash at the end would leave.
pub fn run_workload(storage: &SimStorage, config: DatabaseConfig, workload: &Workload) -> Outcome {
    let (database_crash, binlog_crash, redo_crash) =
        (config.crash_points.clone(), config.binlog_crash_points.clone(), config.redo_crash_points.clone());
    let (db, _) = Database::open(config).unwrap();
    let tables = create_schema(&db).unwrap();
    let freeze = {
        let storage = storage.clone();
        move || storage.freeze()
    };
    let (skip, seed, transactions, checkpoints) = (workload.skip, workload.seed, workload.transactions_per_session, workload.checkpoints);
    match workload.point {
        Some(Point::Database(name)) => database_crash.arm(name, skip, freeze),
        Some(Point::Binlog(name)) => binlog_crash.arm(name, skip, freeze),
        Some(Point::Redo(name)) => redo_crash.arm(name, skip, freeze),
        None => {}
    }
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for thread in 0..SESSIONS {
        let (db, acknowledged, stop) = (db.clone(), acknowledged.clone(), stop.clone());
        threads.push(std::thread::spawn(move || {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed * 131 + thread as u64);
            let mut done = 0;
            // Session 0 applies a source's transactions half the time, with
            // their GTIDs (SOURCE_UUID:1, 2, …), as a replica's applier.
            let mut next_given_gno = 1;
            while done < transactions && !stop.load(Ordering::Relaxed) {
                let given = thread == 0 && done % 2 == 1;
                let attempt = if given {
                    given_transaction(&db, &mut rng, tables, thread + 1, next_given_gno)
                } else {
                    random_transaction(&db, &mut rng, tables, thread + 1)
                };
                match attempt {
                    Attempt::Committed(gtid) => {
                        acknowledged.lock().extend(gtid);
                        done += 1;
                        if given {
                            // An applier restarted on it: skipped, nothing changes.
                            if done % 3 == 0 {
                                match given_transaction(&db, &mut rng, tables, thread + 1, next_given_gno) {
                                    Attempt::Skipped(_) | Attempt::Retry | Attempt::Failed(_) => {}
                                    Attempt::Committed(gtid) => panic!("{gtid:?} committed twice"),
                                }
                            }
                            next_given_gno += 1;
                        }
                    }
                    Attempt::Skipped(gtid) => panic!("{gtid} skipped before it was committed"),
                    Attempt::Retry => {}
                    Attempt::Failed(_) => break,
                }
            }
        }));
    }
    // Checkpoints and a DDL now and then, while the sessions run.
    let background = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut round = 0;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_micros(300));
                if checkpoints {
                    let _ = db.checkpoint();
                }
                if round % 7 == 3 {
                    let name = format!("extra{round}");
                    let spec = engine::TableSpec {
                        database: DB.into(),
                        name: name.clone(),
                        columns: vec![engine::ColumnDef::new("id", binlog_format::ColumnType::LongLong).not_null()],
                        primary_key: vec!["id".into()],
                        ..Default::default()
                    };
                    let _ = db.execute_ddl(&context(0), &format!("CREATE TABLE {name} (id BIGINT PRIMARY KEY)"), |e| e.create_table(&spec));
                }
                round += 1;
            }
        })
    };
    for thread in threads {
        thread.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    background.join().unwrap();
    let fired = storage.is_frozen();
    if std::env::var("VERBOSE").is_ok() {
        eprintln!(
            "{:?}: skip {skip} fired {fired} {:?} acknowledged {}",
            workload.point.map(Point::name),
            db.counters(),
            acknowledged.lock().len()
        );
    }
    if !fired && workload.point.is_some() {
        db.close().unwrap();
    }
    let acknowledged = acknowledged.lock().clone();
    Outcome { acknowledged, fired }
}
