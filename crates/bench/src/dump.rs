//! `binlogd bench dump`: how fast the binlog dump (COM_BINLOG_DUMP)
//! delivers existing binlog files to N readers over loopback, beside a
//! baseline measured in the same run: N threads that read the same files
//! and write them to a loopback socket, the least any sender must do.
//!
//! The server runs in this process on DIR (filled with `--fill-mib` MiB of
//! row events first when DIR has no binlog yet). Each reader logs in,
//! declares `@master_binlog_checksum`, and dumps non-blocking from the
//! first file to the end of the log. Files are read once before either
//! run, so both read from the page cache; `--rounds` alternates the two
//! and keeps each one's best round. The target is at least 0.8x the
//! baseline with one reader.
//!
//! `--binlog-transaction-compression OFF,ON` measures the same fill
//! written both ways (ON: zstd Transaction_payload events, in the data
//! directory `DIR-compression-on` when OFF runs too): bytes/s, events/s
//! and transactions/s delivered to the readers, each setting beside its
//! own baseline. The fill's rows are digit groups like sysbench's `c`
//! column, so they compress about as much as sysbench's do.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use replica::source_client::{DumpPacket, SourceAddress, SourceClient};
use serde::Serialize;

use super::compression::{on_off, CompressionArgs};
use super::dump_tail::{self, ReaderCounts, TailArgs};
use super::report::{self, Bar, Table};
use serve::ServeOptions;

/// Most readers one run may start (two threads each for the baseline).
pub const READERS_MAX: u32 = 256;
/// Largest fill.
pub const FILL_MIB_MAX: u64 = 64 * 1024;
/// Row text per INSERT row and rows per INSERT statement (1 MiB each).
const FILL_ROW_BYTES: usize = 16 * 1024;
const FILL_ROWS_PER_STATEMENT: usize = 64;
/// Baseline copy buffer: what a file-to-socket copy loop would use.
const COPY_BUFFER_BYTES: usize = 256 * 1024;
const TARGET_RATIO_MIN: f64 = 0.8;
const MIB: f64 = 1024.0 * 1024.0;
/// Connect, read and write timeout of the benchmark's clients.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
const CSV_COLUMNS: [&str; 11] = [
    "readers",
    "bytes_per_reader",
    "dump_seconds",
    "mb_per_sec",
    "baseline_mb_per_sec",
    "ratio",
    "binlog_transaction_compression",
    "events_per_reader",
    "transactions_per_reader",
    "events_per_sec",
    "transactions_per_sec",
];
/// Event types that open a transaction: Gtid (33) and tagged Gtid (42).
const GTID_EVENT_TYPES: [u8; 2] = [33, 42];
/// Suffix of the data directory of the compression ON run when OFF runs too.
const COMPRESSION_ON_SUFFIX: &str = "-compression-on";

#[derive(Debug, Clone, clap::Args)]
pub struct DumpBenchArgs {
    /// Data directory of the server (binlog in DIR/binlog); filled with
    /// --fill-mib MiB of binlog when it has none yet, else used as it is.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// Concurrent readers, each dumping every file.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=READERS_MAX as i64))]
    pub readers: u32,

    /// MiB of binlog to write into an empty DIR.
    #[arg(long, value_name = "MIB", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=FILL_MIB_MAX))]
    pub fill_mib: u64,

    /// Rounds of (baseline, dump); each rate is the best round's, which
    /// keeps other processes' bursts on a shared machine out of the ratio.
    #[arg(long, value_name = "K", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,

    /// Print one JSON object (`mb_per_sec`, `baseline_mb_per_sec`, ...).
    #[arg(long)]
    pub json: bool,

    /// Write the result as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,

    /// Write a bar chart (dump vs baseline MB/s) as PNG.
    #[arg(long, value_name = "FILE.png")]
    pub png: Option<PathBuf>,

    /// Instead of dumping existing files: for each reader count in the
    /// list (e.g. `0,16`), sessions commit small transactions while that
    /// many readers follow the tail; prints commits/s per count and the
    /// ratio to the run without readers (JSON: `rows`; CSV: one row per
    /// count).
    #[arg(long, value_name = "N,N,...", value_parser = super::dump_tail::parse_reader_counts)]
    pub tail_readers: Option<ReaderCounts>,

    /// With --tail-readers: how long each count's sessions commit.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub commit_seconds: f64,

    /// With --tail-readers: concurrent committing sessions.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..=super::dump_tail::COMMIT_SESSIONS_MAX as i64))]
    pub commit_sessions: u32,

    /// A `binlogd serve` option of the benchmark's server (`NAME=VALUE`,
    /// repeatable), e.g. `binlogd_dump_send_delay=0`.
    #[arg(long = "server-option", value_name = "NAME=VALUE", value_parser = super::replication::parse_server_option)]
    pub server_options: Vec<String>,

    // --binlog-transaction-compression OFF,ON of the fill, and its zstd level.
    #[command(flatten)]
    pub compression: CompressionArgs,
}

#[derive(Debug, Clone, Serialize)]
pub struct DumpResult {
    pub readers: u32,
    /// Event bytes one dump delivered.
    pub bytes_per_reader: u64,
    pub dump_seconds: f64,
    /// MB/s (MiB) delivered to all readers together.
    pub mb_per_sec: f64,
    pub baseline_bytes_per_reader: u64,
    pub baseline_seconds: f64,
    pub baseline_mb_per_sec: f64,
    /// mb_per_sec / baseline_mb_per_sec.
    pub ratio: f64,
    pub target_ratio_min: f64,
    /// Whether the fill was written with `binlog_transaction_compression`.
    pub binlog_transaction_compression: bool,
    /// Events (Transaction_payload counted as one) and transactions (Gtid
    /// events) one dump delivered.
    pub events_per_reader: u64,
    pub transactions_per_reader: u64,
    /// Events and transactions per second to all readers together.
    pub events_per_sec: f64,
    pub transactions_per_sec: f64,
}

/// What one dump delivered to each reader, and how long it took.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Delivered {
    bytes: u64,
    events: u64,
    transactions: u64,
    elapsed: Duration,
}

fn start_server(args: &DumpBenchArgs, datadir: &Path) -> Result<serve::Running, String> {
    let mut serve_arguments =
        vec!["--datadir".to_string(), datadir.display().to_string(), "--port=0".to_string(), "--bind=127.0.0.1".to_string()];
    serve_arguments.extend(args.server_options.iter().cloned());
    let options = ServeOptions::parse(&serve_arguments)?;
    serve::start(&options)
}

/// The data directory of the run with `compression`.
fn datadir(args: &DumpBenchArgs, compression: bool) -> PathBuf {
    if compression && args.compression.settings().len() > 1 {
        let mut name = args.dir.as_os_str().to_owned();
        name.push(COMPRESSION_ON_SUFFIX);
        PathBuf::from(name)
    } else {
        args.dir.clone()
    }
}

pub fn run(args: &DumpBenchArgs) -> Result<(), String> {
    if let Some(reader_counts) = &args.tail_readers {
        let running = start_server(args, &args.dir)?;
        let address = running.server.local_address();
        return run_tail(args, &reader_counts.0, address, running);
    }
    let mut results = Vec::new();
    for compression in args.compression.settings() {
        results.push(run_files(args, &datadir(args, compression), compression)?);
    }
    if args.json {
        let text = match results.as_slice() {
            [one] => serde_json::to_string(one),
            all => serde_json::to_string(all),
        };
        println!("{}", text.map_err(|error| error.to_string())?);
    } else {
        print_table(&results);
    }
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|result| {
            vec![
                result.readers.to_string(),
                result.bytes_per_reader.to_string(),
                format!("{:.3}", result.dump_seconds),
                format!("{:.1}", result.mb_per_sec),
                format!("{:.1}", result.baseline_mb_per_sec),
                format!("{:.3}", result.ratio),
                on_off(result.binlog_transaction_compression).to_string(),
                result.events_per_reader.to_string(),
                result.transactions_per_reader.to_string(),
                format!("{:.1}", result.events_per_sec),
                format!("{:.1}", result.transactions_per_sec),
            ]
        })
        .collect();
    if let Some(path) = &args.csv {
        report::write_csv(path, &CSV_COLUMNS, &rows)?;
    }
    if let Some(path) = &args.png {
        let mut bars = Vec::new();
        for result in &results {
            let zstd = if result.binlog_transaction_compression { " zstd" } else { "" };
            bars.push(Bar { label: format!("dump{zstd} x{}", result.readers), value: result.mb_per_sec });
            bars.push(Bar { label: format!("baseline{zstd} x{}", result.readers), value: result.baseline_mb_per_sec });
        }
        report::plot_bars(path, "binlog dump MB/s vs file-to-socket baseline", &bars)?;
    }
    Ok(())
}

/// Fills `datadir` if it has no binlog yet (compressed when
/// `compression`), then times the baseline and the dump, alternated.
fn run_files(args: &DumpBenchArgs, datadir: &Path, compression: bool) -> Result<DumpResult, String> {
    let needs_fill = !datadir.join("binlog").join("binlog.index").exists();
    let running = start_server(args, datadir)?;
    let address = running.server.local_address();
    let result = (|| {
        if needs_fill {
            fill(address, args.fill_mib * 1024 * 1024, args.compression.level_zstd(compression))?;
        }
        let binlog = running.database.binlog_status();
        let dir = binlog.options().dir.clone();
        let files = binlog.file_names();
        warm_page_cache(&dir, &files)?;
        let mut best_baseline: Option<(u64, Duration)> = None;
        let mut best_dump: Option<Delivered> = None;
        for _ in 0..args.rounds {
            let round = baseline(&dir, &files, args.readers)?;
            if best_baseline.is_none_or(|best| round.1 < best.1) {
                best_baseline = Some(round);
            }
            let round = dump(address, &files[0], args.readers)?;
            if best_dump.is_none_or(|best| round.elapsed < best.elapsed) {
                best_dump = Some(round);
            }
        }
        Ok::<_, String>(result_of(args.readers, compression, best_dump.expect("rounds >= 1"), best_baseline.expect("rounds >= 1")))
    })();
    running.stop()?;
    result
}

fn run_tail(args: &DumpBenchArgs, reader_counts: &[u32], address: SocketAddr, running: serve::Running) -> Result<(), String> {
    if !(0.1..=3600.0).contains(&args.commit_seconds) {
        running.stop()?;
        return Err("--commit-seconds: 0.1 to 3600".into());
    }
    let tail_args = TailArgs {
        reader_counts: reader_counts.to_vec(),
        commit_seconds: args.commit_seconds,
        commit_sessions: args.commit_sessions,
        rounds: args.rounds,
    };
    let result = dump_tail::run(address, &running, &tail_args);
    running.stop()?;
    let result = result?;
    if args.json {
        println!("{}", serde_json::to_string(&result).map_err(|error| error.to_string())?);
    } else {
        dump_tail::print_table(&result);
    }
    if let Some(path) = &args.csv {
        report::write_csv(path, &dump_tail::CSV_COLUMNS, &dump_tail::csv_rows(&result))?;
    }
    if let Some(path) = &args.png {
        let bars = result
            .rows
            .iter()
            .map(|row| Bar { label: format!("{} tail readers", row.tail_readers), value: row.commits_per_sec })
            .collect::<Vec<_>>();
        report::plot_bars(path, "source commits/s with N readers following the tail", &bars)?;
    }
    Ok(())
}

fn result_of(readers: u32, compression: bool, dump: Delivered, baseline: (u64, Duration)) -> DumpResult {
    let seconds = |elapsed: Duration| elapsed.as_secs_f64().max(1e-9);
    let rate = |count: u64, elapsed: Duration| count as f64 * f64::from(readers) / seconds(elapsed);
    let mb_per_sec = rate(dump.bytes, dump.elapsed) / MIB;
    let baseline_mb_per_sec = rate(baseline.0, baseline.1) / MIB;
    DumpResult {
        readers,
        bytes_per_reader: dump.bytes,
        dump_seconds: dump.elapsed.as_secs_f64(),
        mb_per_sec,
        baseline_bytes_per_reader: baseline.0,
        baseline_seconds: baseline.1.as_secs_f64(),
        baseline_mb_per_sec,
        ratio: mb_per_sec / baseline_mb_per_sec.max(1e-9),
        target_ratio_min: TARGET_RATIO_MIN,
        binlog_transaction_compression: compression,
        events_per_reader: dump.events,
        transactions_per_reader: dump.transactions,
        events_per_sec: rate(dump.events, dump.elapsed),
        transactions_per_sec: rate(dump.transactions, dump.elapsed),
    }
}

fn print_table(results: &[DumpResult]) {
    let mut table = Table::new(&[
        "readers",
        "compression",
        "MiB per reader",
        "dump MB/s",
        "events/s",
        "transactions/s",
        "baseline MB/s",
        "ratio",
        "target",
    ]);
    for result in results {
        table.push_row(vec![
            result.readers.to_string(),
            on_off(result.binlog_transaction_compression).to_string(),
            format!("{:.1}", result.bytes_per_reader as f64 / MIB),
            format!("{:.1}", result.mb_per_sec),
            format!("{:.0}", result.events_per_sec),
            format!("{:.0}", result.transactions_per_sec),
            format!("{:.1}", result.baseline_mb_per_sec),
            format!("{:.2}", result.ratio),
            format!(">= {TARGET_RATIO_MIN}x (1 reader)"),
        ]);
    }
    print!("{}", table.render());
    if let [off, on] = results {
        if !off.binlog_transaction_compression && on.binlog_transaction_compression && off.transactions_per_sec > 0.0 {
            println!(
                "compression ON/OFF: MB/s {:.2}, transactions/s {:.2} ({} vs {} transactions per reader)",
                on.mb_per_sec / off.mb_per_sec.max(1e-9),
                on.transactions_per_sec / off.transactions_per_sec,
                on.transactions_per_reader,
                off.transactions_per_reader
            );
        }
    }
}

/// Digit groups like sysbench's `c` column (`NNNNNNNNNNN-NNNN…`), `bytes`
/// long: as compressible as sysbench's rows, unlike a repeated letter.
fn fill_text(seed: &mut u64, bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 12);
    while text.len() < bytes {
        // xorshift64: the fill must not spend its time in a random generator.
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        if !text.is_empty() {
            text.push('-');
        }
        text.push_str(&format!("{:011}", *seed % 100_000_000_000));
    }
    text.truncate(bytes);
    text
}

/// Writes 1 MiB INSERT statements until they hold `bytes` of row text
/// (the same rows whether compressed or not); `level_zstd`: with
/// `binlog_transaction_compression` ON at that level.
fn fill(address: SocketAddr, bytes: u64, level_zstd: Option<i32>) -> Result<(), String> {
    let mut client = connect(address)?;
    if let Some(level) = level_zstd {
        execute(&mut client, &format!("SET binlog_transaction_compression = ON, binlog_transaction_compression_level_zstd = {level}"))?;
    }
    execute(&mut client, "CREATE DATABASE IF NOT EXISTS dumpbench")?;
    execute(&mut client, "CREATE TABLE dumpbench.t (id BIGINT NOT NULL, note TEXT, PRIMARY KEY (id))")?;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next_id = 0u64;
    while next_id * (FILL_ROW_BYTES as u64) < bytes {
        let mut sql = String::from("INSERT INTO dumpbench.t VALUES ");
        for row in 0..FILL_ROWS_PER_STATEMENT {
            if row > 0 {
                sql.push(',');
            }
            next_id += 1;
            sql.push_str(&format!("({next_id}, '{}')", fill_text(&mut seed, FILL_ROW_BYTES)));
        }
        execute(&mut client, &sql)?;
    }
    Ok(())
}

/// Logs in as root (no password) with the replica's client.
pub(super) fn connect(address: SocketAddr) -> Result<SourceClient, String> {
    let source = SourceAddress { host: address.ip().to_string(), port: address.port(), user: "root".into(), password: String::new() };
    SourceClient::connect(&source, CLIENT_TIMEOUT).map_err(|error| format!("connect {address}: {error}"))
}

pub(super) fn execute(client: &mut SourceClient, sql: &str) -> Result<(), String> {
    client.query(sql).map(drop).map_err(|error| format!("{}: {error}", &sql[..sql.len().min(80)]))
}

/// COM_BINLOG_DUMP with the non-blocking flag from `file`:4; returns the
/// bytes, events and transactions received until the server's EOF.
/// Checksums are not verified: the benchmark measures the source, not
/// this reader.
fn dump_to_end(client: &mut SourceClient, file: &str, server_id: u32) -> Result<(u64, u64, u64), String> {
    client.skip_event_verification();
    client.request_dump_position(server_id, file, 4, true).map_err(|error| format!("COM_BINLOG_DUMP: {error}"))?;
    let (mut event_bytes, mut events, mut transactions) = (0u64, 0u64, 0u64);
    loop {
        match client.read_event().map_err(|error| format!("COM_BINLOG_DUMP: {error}"))? {
            DumpPacket::Event(event) => {
                event_bytes += event.len() as u64;
                events += 1;
                if event.get(binlog_format::constants::TYPE_OFFSET).is_some_and(|kind| GTID_EVENT_TYPES.contains(kind)) {
                    transactions += 1;
                }
            }
            DumpPacket::EndOfLog => return Ok((event_bytes, events, transactions)),
        }
    }
}

fn warm_page_cache(dir: &Path, files: &[String]) -> Result<(), String> {
    let mut buffer = vec![0u8; COPY_BUFFER_BYTES];
    for name in files {
        let mut file = std::fs::File::open(dir.join(name)).map_err(|error| format!("{name}: {error}"))?;
        while file.read(&mut buffer).map_err(|error| format!("{name}: {error}"))? > 0 {}
    }
    Ok(())
}

/// N readers dump from `first_file` to the end: what each received, and
/// the time from the common start to the last reader's end.
fn dump(address: SocketAddr, first_file: &str, readers: u32) -> Result<Delivered, String> {
    let barrier = Arc::new(Barrier::new(readers as usize + 1));
    let threads: Vec<_> = (0..readers)
        .map(|reader| {
            let barrier = Arc::clone(&barrier);
            let first_file = first_file.to_string();
            std::thread::spawn(move || -> Result<(u64, u64, u64), String> {
                let login = connect(address).and_then(|mut client| {
                    execute(&mut client, "SET @master_binlog_checksum = 'CRC32'")?;
                    Ok(client)
                });
                barrier.wait();
                dump_to_end(&mut login?, &first_file, 1000 + reader)
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let mut bytes = Vec::new();
    for thread in threads {
        bytes.push(thread.join().map_err(|_| "a reader panicked".to_string())??);
    }
    let elapsed = start.elapsed();
    if bytes.windows(2).any(|pair| pair[0] != pair[1]) {
        return Err(format!("readers received different amounts: {bytes:?}"));
    }
    let (bytes, events, transactions) = bytes[0];
    Ok(Delivered { bytes, events, transactions, elapsed })
}

/// N threads copy every file to a loopback socket whose other end a
/// drain thread reads; (bytes per copy, time to the last drain's end).
fn baseline(dir: &Path, files: &[String], readers: u32) -> Result<(u64, Duration), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|error| error.to_string())?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    let barrier = Arc::new(Barrier::new(readers as usize + 1));
    let mut drains = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..readers {
        let sender_socket = TcpStream::connect(address).map_err(|error| error.to_string())?;
        let (mut drain_socket, _) = listener.accept().map_err(|error| error.to_string())?;
        drains.push(std::thread::spawn(move || -> u64 {
            let mut buffer = vec![0u8; COPY_BUFFER_BYTES];
            let mut total = 0u64;
            while let Ok(n) = drain_socket.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            total
        }));
        let barrier = Arc::clone(&barrier);
        let paths: Vec<PathBuf> = files.iter().map(|name| dir.join(name)).collect();
        senders.push(std::thread::spawn(move || -> Result<(), String> {
            let mut socket = sender_socket;
            let mut buffer = vec![0u8; COPY_BUFFER_BYTES];
            barrier.wait();
            for path in paths {
                let mut file = std::fs::File::open(&path).map_err(|error| format!("{}: {error}", path.display()))?;
                loop {
                    let n = file.read(&mut buffer).map_err(|error| error.to_string())?;
                    if n == 0 {
                        break;
                    }
                    socket.write_all(&buffer[..n]).map_err(|error| error.to_string())?;
                }
            }
            Ok(())
        }));
    }
    barrier.wait();
    let start = Instant::now();
    for sender in senders {
        sender.join().map_err(|_| "a baseline sender panicked".to_string())??;
    }
    let mut totals = Vec::new();
    for drain in drains {
        totals.push(drain.join().map_err(|_| "a baseline drain panicked".to_string())?);
    }
    Ok((totals[0], start.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `binlogd bench`'s arguments, as the binary parses them.
    #[derive(clap::Parser)]
    struct Bench {
        #[command(flatten)]
        _args: crate::BenchArgs,
    }

    #[test]
    fn small_fill_dumps_every_byte_and_reports_both_rates() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let csv = dir.path().join("dump.csv");
        let args = DumpBenchArgs {
            dir: data.clone(),
            readers: 2,
            fill_mib: 2,
            rounds: 1,
            json: true,
            csv: Some(csv.clone()),
            png: None,
            tail_readers: None,
            commit_seconds: 5.0,
            commit_sessions: 16,
            server_options: Vec::new(),
            compression: CompressionArgs { binlog_transaction_compression: vec![false, true], ..CompressionArgs::default() },
        };
        run(&args).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with("readers,bytes_per_reader,"), "{text}");
        let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(row[0], "2");
        // Two fills' worth of files: at least the 2 MiB written.
        assert!(row[1].parse::<u64>().unwrap() >= 2 * 1024 * 1024, "{text}");
        assert!(row[3].parse::<f64>().unwrap() > 0.0 && row[4].parse::<f64>().unwrap() > 0.0, "{text}");
        // The same rows compressed: the same transactions in fewer bytes
        // and events (one Transaction_payload each instead of its Table_map
        // and rows events).
        let on: Vec<&str> = text.lines().nth(2).unwrap().split(',').collect();
        assert_eq!((row[6], on[6]), ("OFF", "ON"), "{text}");
        assert_eq!(row[8], on[8], "the same transactions: {text}");
        assert!(on[8].parse::<u64>().unwrap() >= 2, "{text}");
        // Random digits hold 3.3 bits a byte: zstd gets about 2x from them.
        assert!(on[1].parse::<u64>().unwrap() * 3 < row[1].parse::<u64>().unwrap() * 2, "at least 1.5x smaller: {text}");
        assert!(on[7].parse::<u64>().unwrap() < row[7].parse::<u64>().unwrap(), "{text}");
        assert!(on[10].parse::<f64>().unwrap() > 0.0, "{text}");
        assert!(dir.path().join("data-compression-on").join("binlog").join("binlog.index").exists());
    }

    /// The tail mode commits with 0 and 2 readers following; each reader
    /// must reach the log's end (the run fails otherwise), and the CSV has
    /// one row per reader count.
    #[test]
    fn tail_readers_follow_every_commit_and_report_commit_rates() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("tail.csv");
        let args = DumpBenchArgs {
            dir: dir.path().join("data"),
            readers: 1,
            fill_mib: 1,
            rounds: 1,
            json: true,
            csv: Some(csv.clone()),
            png: None,
            tail_readers: Some(ReaderCounts(vec![0, 2])),
            commit_seconds: 0.5,
            commit_sessions: 2,
            server_options: vec!["--binlogd_dump_send_delay=1000".to_string()],
            compression: CompressionArgs::default(),
        };
        run(&args).unwrap();
        let parsed = <Bench as clap::Parser>::try_parse_from(["bench", "dump", "--dir", "d", "--tail-readers", "0,16"]);
        assert!(parsed.is_ok(), "{:?}", parsed.err());
        let text = std::fs::read_to_string(&csv).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("tail_readers,commit_sessions,"), "{text}");
        assert_eq!(lines.len(), 3, "{text}");
        for (line, readers) in lines[1..].iter().zip(["0", "2"]) {
            let row: Vec<&str> = line.split(',').collect();
            assert_eq!(row[0], readers);
            assert!(row[3].parse::<u64>().unwrap() > 0, "no commits: {text}");
            assert!(row[4].parse::<f64>().unwrap() > 0.0, "{text}");
        }
        assert_eq!(lines[1].split(',').nth(5), Some("1.000"), "{text}");
        // The dump threads' and reader threads' CPU: none without readers,
        // some with them (found by thread name).
        let thread_cpu = |line: &str| -> Vec<f64> { line.split(',').skip(9).map(|value| value.parse().unwrap()).collect() };
        assert_eq!(thread_cpu(lines[1]), [0.0, 0.0], "{text}");
        assert!(thread_cpu(lines[2]).iter().all(|&ms| ms > 0.0), "{text}");
    }
}
