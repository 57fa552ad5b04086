//! Measures what a large commit does to small concurrent commits: writer
//! threads run sysbench-like write transactions on four tables while one
//! REPEATABLE READ transaction inserts many large rows into a fifth and
//! commits (each writer sleeps 2 ms per commit, for the fsync a server
//! waits for). Prints the writers' commits per 50 ms window around the large
//! commit and their worst latency during it.
//!
//! The engine logs the large commit's phases (stamping, lock release,
//! inline purge) to stderr.
//!
//! `cargo run --release -p engine --example big_commit_stall -- [ROWS] [WRITERS]`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use binlog_format::{ColumnType, Value};
use engine::{ColumnDef, Engine, EngineConfig, IndexSpec, TableSpec};

const TABLES: usize = 4;
const ROWS_PER_TABLE: i64 = 10_000;
const PAYLOAD_BYTES: usize = 4000;
const WINDOW: Duration = Duration::from_millis(50);

fn sbtest(engine: &Engine, n: usize) -> engine::TableId {
    let spec = TableSpec {
        database: "d".into(),
        name: format!("sbtest{n}"),
        columns: vec![
            ColumnDef::new("id", ColumnType::LongLong),
            ColumnDef::new("k", ColumnType::Long),
            ColumnDef::new("c", ColumnType::VarChar { max_length_bytes: 120 }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec { name: "k".into(), columns: vec!["k".into()], unique: false }],
        auto_increment_start: 0,
        partitioning: None,
        comment: String::new(),
        default_collation: None,
    };
    engine.create_table(&spec).unwrap().id
}

fn main() {
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    let mut args = std::env::args().skip(1);
    let big_rows: usize = args.next().map_or(167_000, |a| a.parse().unwrap());
    let writers: usize = args.next().map_or(8, |a| a.parse().unwrap());
    let engine = Engine::new(EngineConfig { memory_limit_bytes: 8 << 30, ..EngineConfig::default() });
    engine.create_database("d").unwrap();
    let tables: Vec<_> = (0..TABLES).map(|n| sbtest(&engine, n)).collect();
    for &table in &tables {
        let mut trx = engine.begin();
        for id in 0..ROWS_PER_TABLE {
            trx.insert(table, vec![Value::Int(id), Value::Int(id), Value::Bytes(vec![b'c'; 120])]).unwrap();
        }
        trx.commit(None).unwrap();
    }
    let big = engine
        .create_table(&TableSpec {
            database: "d".into(),
            name: "big".into(),
            columns: vec![ColumnDef::new("id", ColumnType::LongLong), ColumnDef::new("pad", ColumnType::Blob { length_bytes: 2 })],
            primary_key: vec!["id".into()],
            indexes: vec![],
            auto_increment_start: 0,
            partitioning: None,
            comment: String::new(),
            default_collation: None,
        })
        .unwrap()
        .id;

    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let records: Arc<Mutex<Vec<(Duration, Duration)>>> = Arc::default();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (engine, stop, records, tables) = (engine.clone(), stop.clone(), records.clone(), tables.clone());
            thread::Builder::new()
                .name("writer".into())
                .spawn(move || {
                    let mut seed = 0x9e3779b97f4a7c15u64 ^ (w as u64 * 7919);
                    let mut next = || {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed
                    };
                    let mut mine = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let began = Instant::now();
                        let mut trx = engine.begin();
                        let table = tables[next() as usize % TABLES];
                        let id = (next() % ROWS_PER_TABLE as u64) as i64;
                        let k = (next() % 1000) as i64;
                        let ok = (|| {
                            trx.update_by_pk(table, &[Value::Int(id)], vec![Value::Int(id), Value::Int(k), Value::Bytes(vec![b'x'; 120])])?;
                            let id2 = (next() % ROWS_PER_TABLE as u64) as i64;
                            trx.update_by_pk(
                                table,
                                &[Value::Int(id2)],
                                vec![Value::Int(id2), Value::Int(k + 1), Value::Bytes(vec![b'y'; 120])],
                            )?;
                            let id3 = (next() % ROWS_PER_TABLE as u64) as i64;
                            trx.delete_by_pk(table, &[Value::Int(id3)])?;
                            trx.insert(table, vec![Value::Int(id3), Value::Int(k), Value::Bytes(vec![b'z'; 120])])?;
                            Ok::<_, engine::EngineError>(())
                        })();
                        match ok {
                            Ok(()) => {
                                // The commit's fsync, as a server waits for it.
                                thread::sleep(Duration::from_millis(2));
                                trx.commit(None).unwrap();
                                let done = Instant::now();
                                mine.push((done - start, done - began));
                            }
                            Err(_) => trx.rollback(),
                        }
                    }
                    records.lock().unwrap().extend(mine);
                })
                .unwrap()
        })
        .collect();

    let mut trx = engine.begin();
    let _ = trx.get(big, &[Value::Int(-1)]).unwrap(); // opens the read view
    for id in 0..big_rows {
        trx.insert(big, vec![Value::Int(id as i64), Value::Bytes(vec![b'p'; PAYLOAD_BYTES])]).unwrap();
    }
    thread::sleep(Duration::from_secs(2));
    let commit_from = start.elapsed();
    trx.commit(None).unwrap();
    let commit_to = start.elapsed();
    thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    for handle in handles {
        handle.join().unwrap();
    }
    let records = records.lock().unwrap();
    let window_of = |at: Duration| (at.as_nanos() / WINDOW.as_nanos()) as usize;
    let mut counts = vec![0usize; window_of(start.elapsed()) + 1];
    for (done, _) in records.iter() {
        counts[window_of(*done)] += 1;
    }
    let (first, last) = (window_of(commit_from), window_of(commit_to));
    let before: Vec<usize> = counts[first.saturating_sub(20)..first].to_vec();
    let mut sorted = before.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    println!("commit {:.0} ms; writer commits per 50 ms: median before {median}", (commit_to - commit_from).as_secs_f64() * 1e3);
    println!("windows from 5 before to 10 after: {:?}", &counts[first.saturating_sub(5)..(last + 11).min(counts.len())]);
    println!("commit started {:?} into window {first}", commit_from - WINDOW * first as u32);
    let during = records.iter().filter(|(done, latency)| *done >= commit_from && *done - *latency <= commit_to).map(|(_, l)| *l).max();
    println!("worst writer latency overlapping the commit: {:?}", during);
    let lowest_during = counts[first..=last].iter().min().unwrap();
    println!("lowest window during: {lowest_during} ({:.2} of median)", *lowest_during as f64 / median as f64);
}
