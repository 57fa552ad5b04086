//! `binlogd inspect FILE...`: print binlog events like `mysqlbinlog -vv`,
//! or as JSON lines with `--json`.
//!
//! The driver here reads each file event by event ([`reader`]), decodes the
//! event with the format crate, gathers what rendering needs beyond the
//! event itself (the table maps rows events refer to, whether a
//! Large_transaction_header's target exists) into an [`EventRecord`], and
//! hands it to the text or JSON renderer. `--verify` adds the structural
//! checks of [`verify`].
//!
//! Errors name the file and the offset. Reading a file stops at its first
//! framing error (bad length, truncation, checksum mismatch): past it, event
//! boundaries are unknown. An event whose frame is sound but whose body does
//! not decode is reported and skipped, since the next event's offset is
//! still known. Any error makes the exit status 1; the events before it
//! have been printed.

mod json;
mod mariadb;
mod reader;
mod record;
mod rows;
mod tables;
mod text;
mod time;
mod verify;

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use binlog_format::constants::BINLOG_MAGIC_LENGTH;
use binlog_format::events::transaction_payload::InnerEvent;
use binlog_format::DecodeError;
use binlog_format::{Event, EventType};

use self::reader::{EventReader, OpenError};
use self::record::{EventRecord, Extra, PartialRowsContext, RowsContext, TargetCheck};
use self::tables::TableMaps;
use self::verify::Verifier;

#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// Binlog files to read, in order.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// One JSON object per event and line instead of mysqlbinlog-style text.
    #[arg(long)]
    pub json: bool,

    /// Start at the event at this offset of the first file (an event
    /// boundary). The Format_description event is always read; text output
    /// prints it, as mysqlbinlog does.
    #[arg(long, value_name = "N")]
    pub start_position: Option<u64>,

    /// Stop before the first event at or after this offset of the last file.
    #[arg(long, value_name = "N")]
    pub stop_position: Option<u64>,

    /// Also check the structure, not just the framing and checksums:
    /// end_log_pos, transaction boundaries and transaction_length, the
    /// logical clock, GTIDs, Large_transaction_header targets. Problems go
    /// to stderr and make the exit status 1.
    #[arg(long)]
    pub verify: bool,
}

/// Prefix of every message on stderr.
const PROGRAM: &str = "binlogd inspect";

pub fn run(args: &InspectArgs) -> ExitCode {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut failed = false;
    let last = args.files.len() - 1;
    for (index, path) in args.files.iter().enumerate() {
        let range = PositionRange {
            start: if index == 0 { args.start_position } else { None },
            stop: if index == last { args.stop_position } else { None },
        };
        match inspect_file(path, args, range, &mut out).and_then(|clean| out.flush().map(|()| clean)) {
            Ok(true) => {}
            Ok(false) => failed = true,
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
                // `binlogd inspect big.000001 | head`: the reader has seen enough.
                return if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS };
            }
            Err(error) => {
                eprintln!("{PROGRAM}: cannot write output: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[derive(Debug, Clone, Copy)]
struct PositionRange {
    start: Option<u64>,
    stop: Option<u64>,
}

/// Reports a problem in `file` on stderr. Flushes what stdout holds first,
/// so that the two read in order when they go to the same terminal.
fn report(out: &mut impl Write, file: &str, message: impl std::fmt::Display) -> io::Result<()> {
    out.flush()?;
    eprintln!("{PROGRAM}: {file}: {message}");
    Ok(())
}

/// Prints one file. `Ok(true)` when it read cleanly (and verified, with
/// `--verify`); `Ok(false)` after reporting a problem on stderr; `Err` when
/// writing the output failed.
fn inspect_file(path: &std::path::Path, args: &InspectArgs, range: PositionRange, out: &mut impl Write) -> io::Result<bool> {
    let file = path.display().to_string();
    let mut reader = match EventReader::open(path) {
        Ok(reader) => reader,
        Err(OpenError::Io(error)) => {
            report(out, &file, format_args!("cannot read: {error}"))?;
            return Ok(false);
        }
        Err(OpenError::Format(error)) => {
            report(out, &file, &error)?;
            return Ok(false);
        }
    };
    let mut clean = true;
    let mut tables = TableMaps::default();
    let mut verifier = args.verify.then(Verifier::default);
    let mut renderer: Box<dyn Render> = if args.json { Box::new(json::JsonRenderer) } else { Box::new(text::TextRenderer::default()) };
    renderer.file_start(out, &file)?;
    let start = range.start.unwrap_or(0);
    let mut skipped_to_start = start <= BINLOG_MAGIC_LENGTH as u64;
    loop {
        if !skipped_to_start && reader.offset() > BINLOG_MAGIC_LENGTH as u64 {
            // The first event (the Format_description event, which tells
            // whether events carry checksums) has been read: jump ahead.
            skipped_to_start = true;
            if let Err(error) = reader.skip_to(start) {
                report(out, &file, &error)?;
                return Ok(false);
            }
        }
        let offset = reader.offset();
        if range.stop.is_some_and(|stop| offset >= stop) {
            break;
        }
        let frame = match reader.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(error) => {
                report(out, &file, &error)?;
                clean = false;
                if let Some(verifier) = verifier.as_mut() {
                    verifier.abandon();
                }
                break;
            }
        };
        debug_assert_eq!(frame.offset, offset);
        let header = frame.raw.header;
        let checksum = frame.raw.has_checksum.then(|| {
            let bytes = frame.raw.bytes;
            u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"))
        });
        let decoded = Event::decode(&frame.raw, frame.context);
        let event = match decoded {
            Ok(event) => event,
            Err(error) => {
                report(
                    out,
                    &file,
                    format_args!("at offset {offset}: cannot decode {} event: {error}", EventType::name_of(header.event_type)),
                )?;
                clean = false;
                Event::Unknown { event_type: header.event_type, body: frame.raw.body.to_vec() }
            }
        };
        // A MariaDB compressed event shows, verifies and maps tables as the
        // plain event it holds; its header keeps its own type.
        let event = event.into_uncompressed();
        // A NONE file's Format_description has a checksum field MySQL
        // neither checks nor prints.
        let checksum = checksum.filter(|_| !matches!(&event, Event::FormatDescription(format) if !format.has_checksum()));
        let payload_events = match &event {
            Event::TransactionPayload(payload) => Some(payload.events(frame.context)),
            _ => None,
        };
        let is_format_description = matches!(event, Event::FormatDescription(_));
        let extra = match &event {
            Event::LargeTransactionHeader(lth) => {
                let target = lth.terminating_event_offset;
                Extra::Terminating(match reader.probe(target) {
                    Ok(found) => TargetCheck::Found(found),
                    Err(error) => TargetCheck::Missing(error.message),
                })
            }
            _ => tables.observe(&event),
        };
        if let Some(error) = rows_error(&extra) {
            report(
                out,
                &file,
                format_args!("at offset {offset}: cannot decode the rows of this {} event: {error}", EventType::name_of(header.event_type)),
            )?;
            clean = false;
        }
        let record = EventRecord { file: &file, offset, header, checksum, event: &event, extra };
        if let Some(verifier) = verifier.as_mut() {
            for problem in verifier.observe(&record) {
                report(out, &file, format_args!("at offset {}: verify: {}", problem.offset, problem.message))?;
            }
        }
        // The Format_description event is always shown in text mode, like
        // mysqlbinlog does; everything else only within the range.
        let in_range = offset >= start || (is_format_description && !args.json);
        if in_range {
            renderer.event(out, &record)?;
        }
        if let Some(events) = payload_events {
            clean &= show_payload(out, &file, offset, events, &mut tables, verifier.as_mut(), in_range.then_some(&mut renderer))?;
        }
    }
    if let Some(mut verifier) = verifier {
        let problems = verifier.finish(reader.offset());
        for problem in &problems {
            report(out, &file, format_args!("at offset {}: verify: {}", problem.offset, problem.message))?;
        }
        let summary = verifier.summary();
        if summary.problems > 0 {
            clean = false;
        }
        report(
            out,
            &file,
            format_args!("verify: {} events, {} transactions, {} problems", summary.events, summary.transactions, summary.problems),
        )?;
    }
    renderer.file_end(out, &file, clean && reader.offset() >= reader.file_length())?;
    Ok(clean)
}

/// The events a Transaction_payload at `offset` holds, decompressed:
/// each shown at the payload's offset (as mysqlbinlog shows them), its rows
/// decoded with the table maps before it, the whole checked by `--verify`
/// as one transaction. `Ok(false)` after reporting a problem.
fn show_payload(
    out: &mut impl Write,
    file: &str,
    offset: u64,
    events: Result<Vec<InnerEvent>, DecodeError>,
    tables: &mut TableMaps,
    verifier: Option<&mut Verifier>,
    renderer: Option<&mut Box<dyn Render>>,
) -> io::Result<bool> {
    let events = match events {
        Ok(events) => events,
        Err(error) => {
            report(out, file, format_args!("at offset {offset}: cannot decode the Transaction_payload: {error}"))?;
            return Ok(false);
        }
    };
    let mut clean = true;
    let mut records = Vec::with_capacity(events.len());
    for inner in &events {
        let extra = tables.observe(&inner.event);
        if let Some(error) = rows_error(&extra) {
            report(
                out,
                file,
                format_args!(
                    "at offset {offset}: cannot decode the rows of the {} event at {} of its payload: {error}",
                    EventType::name_of(inner.header.event_type),
                    inner.offset
                ),
            )?;
            clean = false;
        }
        records.push(EventRecord { file, offset, header: inner.header, checksum: None, event: &inner.event, extra });
    }
    if let Some(verifier) = verifier {
        for problem in verifier.observe_payload(offset, &records) {
            report(out, file, format_args!("at offset {}: verify: {}", problem.offset, problem.message))?;
            clean = false;
        }
    }
    if let Some(renderer) = renderer {
        renderer.payload_start(out)?;
        for record in &records {
            renderer.event(out, record)?;
        }
        renderer.payload_end(out)?;
    }
    Ok(clean)
}

/// Why a rows event whose table map is known did not decode.
fn rows_error(extra: &Extra) -> Option<&String> {
    match extra {
        Extra::Rows(RowsContext { table: Some(_), rows: Err(error) })
        | Extra::PartialRows(PartialRowsContext { table: Some(_), rows: Err(error) }) => Some(error),
        _ => None,
    }
}

/// An output format.
trait Render {
    fn file_start(&mut self, out: &mut dyn Write, file: &str) -> io::Result<()>;
    fn event(&mut self, out: &mut dyn Write, record: &EventRecord<'_>) -> io::Result<()>;
    /// `complete`: the whole file was read without error.
    fn file_end(&mut self, out: &mut dyn Write, file: &str, complete: bool) -> io::Result<()>;
    /// Around the events of a Transaction_payload.
    fn payload_start(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
    fn payload_end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}
