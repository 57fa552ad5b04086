//! `binlogd bench dump --tail-readers 0,16`: what readers following the
//! live tail cost the source's commits (the target: with 16 readers,
//! commit throughput within 10% of the same workload with none).
//!
//! The in-process server (the one `bench dump` starts) takes small
//! autocommit INSERTs from `--commit-sessions` wire-client sessions for
//! `--commit-seconds`, once per reader count in the list, while that many
//! wire-client readers follow the tail with a blocking COM_BINLOG_DUMP
//! from the end of the log. Readers only frame packets and note each
//! event's `log_pos`, so on a small machine their own CPU stays small
//! (a `mariadb-binlog` process per reader would cost more than the dump
//! threads it measures). After the commits stop, each reader must reach
//! the log's end: the time that takes is the readers' lag. Rounds
//! alternate the reader counts; each count keeps its best round. Besides
//! the process's CPU per commit, the table splits out the source's dump
//! threads (named `binlog-dump` while they stream) and the readers'
//! threads: on a shared machine commits/s moves with other jobs, what the
//! readers cost per commit much less.

use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::dump::{connect, execute};
use super::report::Table;
use super::thread_cpu::ThreadCpuSample;
use replica::source_client::DumpPacket;
use serve::Running;

/// The target: commits/s with the most readers at least this share of
/// the rate with none.
pub const TAIL_TARGET_RATIO_MIN: f64 = 0.9;
/// Largest reader count and session count of one phase.
pub const TAIL_READERS_MAX: u32 = 256;
pub const COMMIT_SESSIONS_MAX: u32 = 256;
/// How long readers may take to reach the end after the commits stop
/// before the run fails.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a reader may take to receive the stream's first event.
const READER_START_TIMEOUT: Duration = Duration::from_secs(30);
/// Row text per INSERT: a small sysbench-like row.
const NOTE_BYTES: usize = 60;
/// Thread names of the source's dumps and of this bench's readers.
const READER_THREAD_PREFIX: &str = "tail-reader-";
pub const CSV_COLUMNS: [&str; 11] = [
    "tail_readers",
    "commit_sessions",
    "commit_seconds",
    "commits",
    "commits_per_sec",
    "ratio_to_no_readers",
    "catch_up_ms",
    "process_cpu_percent",
    "cpu_ms_per_commit",
    "dump_cpu_ms_per_commit",
    "reader_cpu_ms_per_commit",
];

#[derive(Debug, Clone)]
pub struct TailArgs {
    pub reader_counts: Vec<u32>,
    pub commit_seconds: f64,
    pub commit_sessions: u32,
    pub rounds: u32,
}

/// One reader count's best round.
#[derive(Debug, Clone, Serialize)]
pub struct TailRow {
    pub tail_readers: u32,
    pub commit_sessions: u32,
    pub commit_seconds: f64,
    pub commits: u64,
    pub commits_per_sec: f64,
    /// commits_per_sec / that of the run without readers (1 when the list
    /// has no 0).
    pub ratio_to_no_readers: f64,
    /// From the last commit to every reader having the log's end.
    pub catch_up_ms: f64,
    /// CPU time of this whole process (server, sessions, readers) per
    /// wall second, in percent of one core.
    pub process_cpu_percent: f64,
    /// The same CPU time per commit: what readers add per commit, and
    /// unlike commits/s little moved by other load on a shared machine.
    pub cpu_ms_per_commit: f64,
    /// The part of it the source's dump threads used.
    pub dump_cpu_ms_per_commit: f64,
    /// The part of it this bench's reader threads used (they stand for
    /// replicas, which would run elsewhere).
    pub reader_cpu_ms_per_commit: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TailResult {
    pub rows: Vec<TailRow>,
    pub target_ratio_min: f64,
}

/// `--tail-readers 0,16` (a type of its own: clap reads a bare `Vec` as
/// a repeated argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderCounts(pub Vec<u32>);

pub fn parse_reader_counts(text: &str) -> Result<ReaderCounts, String> {
    let counts: Vec<u32> = text
        .split(',')
        .map(|part| part.trim().parse::<u32>().map_err(|error| format!("--tail-readers {text:?}: {error}")))
        .collect::<Result<_, _>>()?;
    if counts.is_empty() || counts.iter().any(|&count| count > TAIL_READERS_MAX) {
        return Err(format!("--tail-readers: counts of 0..={TAIL_READERS_MAX} readers, comma-separated"));
    }
    Ok(ReaderCounts(counts))
}

pub fn run(address: SocketAddr, running: &Running, args: &TailArgs) -> Result<TailResult, String> {
    let mut setup = connect(address)?;
    execute(&mut setup, "CREATE DATABASE IF NOT EXISTS dumpbench")?;
    execute(&mut setup, "DROP TABLE IF EXISTS dumpbench.tail")?;
    execute(&mut setup, "CREATE TABLE dumpbench.tail (id BIGINT NOT NULL, session INT NOT NULL, note VARCHAR(100), PRIMARY KEY (id))")?;
    let next_id = Arc::new(AtomicU64::new(1));
    let mut best: Vec<Option<Phase>> = vec![None; args.reader_counts.len()];
    for _ in 0..args.rounds {
        for (slot, &readers) in args.reader_counts.iter().enumerate() {
            let phase = run_phase(address, running, args, readers, &next_id)?;
            if best[slot].as_ref().is_none_or(|kept| phase.commits_per_sec() > kept.commits_per_sec()) {
                best[slot] = Some(phase);
            }
        }
    }
    let without_readers =
        args.reader_counts.iter().position(|&count| count == 0).and_then(|slot| best[slot].as_ref()).map(Phase::commits_per_sec);
    let rows = args
        .reader_counts
        .iter()
        .zip(best)
        .map(|(&readers, phase)| {
            let phase = phase.expect("rounds >= 1");
            TailRow {
                tail_readers: readers,
                commit_sessions: args.commit_sessions,
                commit_seconds: phase.commit_time.as_secs_f64(),
                commits: phase.commits,
                commits_per_sec: phase.commits_per_sec(),
                ratio_to_no_readers: without_readers.map_or(1.0, |base| phase.commits_per_sec() / base.max(1e-9)),
                catch_up_ms: phase.catch_up.as_secs_f64() * 1000.0,
                process_cpu_percent: phase.cpu_seconds / phase.commit_time.as_secs_f64().max(1e-9) * 100.0,
                cpu_ms_per_commit: phase.cpu_seconds * 1000.0 / phase.commits.max(1) as f64,
                dump_cpu_ms_per_commit: phase.dump_cpu_seconds * 1000.0 / phase.commits.max(1) as f64,
                reader_cpu_ms_per_commit: phase.reader_cpu_seconds * 1000.0 / phase.commits.max(1) as f64,
            }
        })
        .collect();
    Ok(TailResult { rows, target_ratio_min: TAIL_TARGET_RATIO_MIN })
}

pub fn print_table(result: &TailResult) {
    let mut table = Table::new(&[
        "tail readers",
        "sessions",
        "commits",
        "commits/s",
        "vs 0 readers",
        "catch-up ms",
        "process CPU %",
        "CPU ms/commit",
        "dumps",
        "readers",
        "target",
    ]);
    for row in &result.rows {
        table.push_row(vec![
            row.tail_readers.to_string(),
            row.commit_sessions.to_string(),
            row.commits.to_string(),
            format!("{:.0}", row.commits_per_sec),
            format!("{:.3}", row.ratio_to_no_readers),
            format!("{:.1}", row.catch_up_ms),
            format!("{:.0}", row.process_cpu_percent),
            format!("{:.3}", row.cpu_ms_per_commit),
            format!("{:.4}", row.dump_cpu_ms_per_commit),
            format!("{:.4}", row.reader_cpu_ms_per_commit),
            format!(">= {TAIL_TARGET_RATIO_MIN}x (16 readers)"),
        ]);
    }
    print!("{}", table.render());
}

pub fn csv_rows(result: &TailResult) -> Vec<Vec<String>> {
    result
        .rows
        .iter()
        .map(|row| {
            vec![
                row.tail_readers.to_string(),
                row.commit_sessions.to_string(),
                format!("{:.3}", row.commit_seconds),
                row.commits.to_string(),
                format!("{:.1}", row.commits_per_sec),
                format!("{:.3}", row.ratio_to_no_readers),
                format!("{:.1}", row.catch_up_ms),
                format!("{:.1}", row.process_cpu_percent),
                format!("{:.4}", row.cpu_ms_per_commit),
                format!("{:.5}", row.dump_cpu_ms_per_commit),
                format!("{:.5}", row.reader_cpu_ms_per_commit),
            ]
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Phase {
    commits: u64,
    commit_time: Duration,
    catch_up: Duration,
    cpu_seconds: f64,
    dump_cpu_seconds: f64,
    reader_cpu_seconds: f64,
}

impl Phase {
    fn commits_per_sec(&self) -> f64 {
        self.commits as f64 / self.commit_time.as_secs_f64().max(1e-9)
    }
}

/// A reader thread following the tail, and how to end it.
struct TailReader {
    /// log_pos of the newest event received.
    reached: Arc<AtomicU64>,
    socket: std::net::TcpStream,
    thread: std::thread::JoinHandle<Result<(), String>>,
}

fn run_phase(address: SocketAddr, running: &Running, args: &TailArgs, readers: u32, next_id: &Arc<AtomicU64>) -> Result<Phase, String> {
    let binlog = running.database.binlog_status();
    let (start_file, start_position) = binlog.active_position();
    let stopping = Arc::new(AtomicBool::new(false));
    let mut tail_readers = Vec::new();
    for reader in 0..readers {
        let mut client = connect(address)?;
        client.negotiate_checksum().map_err(|error| error.to_string())?;
        // The readers only follow: checksums are the receiver's business.
        client.skip_event_verification();
        client
            .request_dump_position(2000 + reader, &start_file, start_position as u32, false)
            .map_err(|error| format!("COM_BINLOG_DUMP: {error}"))?;
        let reached = Arc::new(AtomicU64::new(0));
        let socket = client.shutdown_handle().map_err(|error| error.to_string())?;
        let thread = {
            let reached = Arc::clone(&reached);
            let stopping = Arc::clone(&stopping);
            // Named, so that a profile tells readers from sessions.
            let spawned =
                std::thread::Builder::new().name(format!("{READER_THREAD_PREFIX}{reader}")).spawn(move || -> Result<(), String> {
                    // This thread is the only writer of `reached`: a plain
                    // store of its own maximum, not a locked read-modify-write
                    // per event.
                    let mut newest = 0u64;
                    loop {
                        match next_event_log_pos(&mut client) {
                            // Events made up by the source (log_pos 0) mark
                            // the start; every stored one moves `reached`.
                            Ok((log_pos, _)) => {
                                let log_pos = u64::from(log_pos).max(1);
                                if log_pos > newest {
                                    newest = log_pos;
                                    reached.store(newest, Ordering::Release);
                                }
                            }
                            Err(_) if stopping.load(Ordering::Acquire) => return Ok(()),
                            Err(error) => return Err(error),
                        }
                    }
                });
            spawned.map_err(|error| format!("cannot start a tail reader: {error}"))?
        };
        tail_readers.push(TailReader { reached, socket, thread });
    }
    let started = Instant::now();
    while tail_readers.iter().any(|reader| reader.reached.load(Ordering::Acquire) == 0) {
        if started.elapsed() > READER_START_TIMEOUT {
            return Err("a tail reader received nothing".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }

    let Committed { commits, commit_time, cpu_seconds, dump_cpu_seconds, reader_cpu_seconds } = commit_for(address, args, next_id)?;
    let (end_file, end_position) = binlog.active_position();
    let commits_stopped = Instant::now();
    if end_file != start_file {
        return Err(format!("the binlog rotated during the run ({start_file} to {end_file}); use a shorter --commit-seconds"));
    }
    while tail_readers.iter().any(|reader| reader.reached.load(Ordering::Acquire) < end_position) {
        if commits_stopped.elapsed() > CATCH_UP_TIMEOUT {
            return Err(format!("tail readers did not reach {end_file}:{end_position} within {CATCH_UP_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let catch_up = commits_stopped.elapsed();
    stopping.store(true, Ordering::Release);
    for reader in tail_readers {
        let _ = reader.socket.shutdown(Shutdown::Both);
        reader.thread.join().map_err(|_| "a tail reader panicked".to_string())??;
    }
    Ok(Phase { commits, commit_time, catch_up, cpu_seconds, dump_cpu_seconds, reader_cpu_seconds })
}

/// What the sessions committed and what the process spent meanwhile.
struct Committed {
    commits: u64,
    commit_time: Duration,
    /// The whole process (getrusage).
    cpu_seconds: f64,
    /// The dump threads' and the reader threads' share of it.
    dump_cpu_seconds: f64,
    reader_cpu_seconds: f64,
}

/// Sessions insert one small row per autocommit transaction until the
/// time is up.
fn commit_for(address: SocketAddr, args: &TailArgs, next_id: &Arc<AtomicU64>) -> Result<Committed, String> {
    let barrier = Arc::new(Barrier::new(args.commit_sessions as usize + 1));
    let duration = Duration::from_secs_f64(args.commit_seconds);
    let note = "n".repeat(NOTE_BYTES);
    let sessions: Vec<_> = (0..args.commit_sessions)
        .map(|session| {
            let barrier = Arc::clone(&barrier);
            let next_id = Arc::clone(next_id);
            let note = note.clone();
            std::thread::spawn(move || -> Result<u64, String> {
                let client = connect(address);
                barrier.wait();
                let mut client = client?;
                let deadline = Instant::now() + duration;
                let mut commits = 0u64;
                while Instant::now() < deadline {
                    let id = next_id.fetch_add(1, Ordering::Relaxed);
                    execute(&mut client, &format!("INSERT INTO dumpbench.tail VALUES ({id}, {session}, '{note}')"))?;
                    commits += 1;
                }
                Ok(commits)
            })
        })
        .collect();
    let thread_names = [source::DUMP_THREAD_NAME, READER_THREAD_PREFIX];
    let threads_before = ThreadCpuSample::now(&thread_names);
    let cpu_before = process_cpu_seconds();
    barrier.wait();
    let started = Instant::now();
    let mut commits = 0;
    let mut first_error = None;
    for session in sessions {
        match session.join().map_err(|_| "a commit session panicked".to_string())? {
            Ok(count) => commits += count,
            Err(error) => first_error = first_error.or(Some(error)),
        }
    }
    let elapsed = started.elapsed();
    let cpu_seconds = process_cpu_seconds() - cpu_before;
    let threads = ThreadCpuSample::now(&thread_names).seconds_since(&threads_before);
    match first_error {
        Some(error) => Err(error),
        None => Ok(Committed { commits, commit_time: elapsed, cpu_seconds, dump_cpu_seconds: threads[0], reader_cpu_seconds: threads[1] }),
    }
}

/// User + system CPU time of this process so far.
fn process_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) != 0 {
            return 0.0;
        }
        usage.assume_init()
    };
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The next event's `log_pos` (header bytes 13..17) and its length.
fn next_event_log_pos(client: &mut replica::source_client::SourceClient) -> Result<(u32, usize), String> {
    match client.read_event().map_err(|error| error.to_string())? {
        DumpPacket::Event(event) if event.len() >= 17 => {
            Ok((u32::from_le_bytes([event[13], event[14], event[15], event[16]]), event.len()))
        }
        DumpPacket::Event(event) => Err(format!("an event of {} bytes", event.len())),
        DumpPacket::EndOfLog => Err("the source ended a blocking dump".to_string()),
    }
}
