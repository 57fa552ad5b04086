//! Checkpoint images: the catalog, the executed GTID set and each table's
//! committed rows and counters, as bytes.
//!
//! ## Consistency rule: a fuzzy snapshot plus idempotent replay
//!
//! [`Engine::begin_checkpoint`] reads, under the catalog lock and the
//! commit registry's lock, the redo's current LSN (the checkpoint's *start
//! LSN*), the catalog and the executed GTID set. Since commits log their
//! commit record and become visible under the registry lock, and DDL logs
//! and applies under the catalog lock, every record before the start LSN
//! is in what the checkpoint captures, and nothing after it is in the
//! catalog image.
//!
//! The tables are then copied one at a time by [`Engine::snapshot_table_parts`],
//! while writers keep going: each table's images are its committed rows as
//! of some moment after the start (a registered read view; the table lock
//! is held for one chunk of [`SNAPSHOT_CHUNK_ROWS`] rows or
//! [`SNAPSHOT_PART_BYTES`] at a time, each chunk one image, so memory
//! holds one chunk, not a copy of the table). It may
//! therefore already contain changes whose records come after the start
//! LSN. Recovery loads the images and replays every committed transaction
//! and DDL from the start LSN on, in log order; each replayed change sets a
//! row by key or deletes it ([`Engine::apply_redo_transaction`]), so a
//! change already in the image is applied again harmlessly and the last
//! change of each key wins. Counters only move up during replay.
//!
//! Redo can be discarded before `redo_retain_from_lsn`: the start LSN, or
//! earlier when a transaction was prepared but not committed at the start
//! (its commit record comes later and needs the prepare record's changes).
//!
//! ## Layout
//!
//! Catalog image: magic `BLDCAT01`, start LSN u64, retain-from LSN u64,
//! next table id u64, databases (count, names), table definitions (count,
//! [`crate::codec`] table definitions), executed GTIDs (bytes: a
//! Previous_gtids body), applier slots (count, each: slot u64, bytes;
//! absent in images written before there were slots).
//!
//! Table image: magic `BLDTBL01`, table id u64, AUTO_INCREMENT next u64,
//! hidden row id next u64, row count u64, then per row its clustered key
//! (bytes) and its values ([`crate::codec`] row). A table may have several
//! images (parts of its rows, in key order); loading adds each one's rows
//! and raises the counters to the highest.
//!
//! Whole-engine image ([`Engine::snapshot`]): magic `BLDENG01`, the catalog
//! image (bytes), then table images (count, each as bytes).

use std::ops::Bound;
use std::sync::Arc;

use binlog_format::bytes::{ByteReader, ByteWriter};
use binlog_format::GtidSet;

use crate::catalog::{Catalog, TableId};
use crate::codec::{put_bytes, put_count, put_str, put_table_def, read_row, read_table_def, CountedReads};
use crate::config::EngineConfig;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::key::hidden_row_id;
use crate::mvcc::{live_row, visible, CommitLookup, ReadView, Version};
use crate::redo::{Lsn, RedoSink};
use crate::registry::{CommitState, RESTORED_COMMIT_SEQ, RESTORED_WRITER};
use crate::table::{clustered_key, Table};

const CATALOG_MAGIC: &[u8; 8] = b"BLDCAT01";
/// In the catalog image's database count: each name is followed by its
/// default collation (u16).
const DATABASES_HAVE_COLLATIONS: u32 = 0x8000_0000;
const TABLE_MAGIC: &[u8; 8] = b"BLDTBL01";
const ENGINE_MAGIC: &[u8; 8] = b"BLDENG01";
/// Rows copied per hold of a table's read lock.
pub const SNAPSHOT_CHUNK_ROWS: usize = 1024;
/// A table image part is cut once it holds this many bytes (large rows).
pub const SNAPSHOT_PART_BYTES: usize = 4 << 20;
/// Table id, AUTO_INCREMENT next, hidden row id next, row count.
const TABLE_IMAGE_COUNTS_BYTES: usize = 4 * 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointLsns {
    /// Replay committed transactions and DDL whose records are at or after this.
    pub start_lsn: Lsn,
    /// Redo before this is no longer needed once the checkpoint is durable.
    pub redo_retain_from_lsn: Lsn,
}

#[derive(Debug, Clone)]
pub struct CheckpointBegin {
    pub lsns: CheckpointLsns,
    pub catalog_image: Vec<u8>,
    /// Tables to copy with [`Engine::snapshot_table_parts`].
    pub tables: Vec<TableId>,
}

impl Engine {
    /// Starts a checkpoint: the start LSN, the catalog and the executed
    /// GTID set, consistent with each other (see the module docs).
    pub fn begin_checkpoint(&self) -> CheckpointBegin {
        let catalog = self.shared.catalog.read();
        let commits = self.shared.commits.read();
        let start_lsn = self.shared.redo.current_lsn();
        let redo_retain_from_lsn = commits.oldest_prepare_lsn().map_or(start_lsn, |lsn| lsn.min(start_lsn));
        let lsns = CheckpointLsns { start_lsn, redo_retain_from_lsn };
        let mut out = CATALOG_MAGIC.to_vec();
        out.put_u64(start_lsn);
        out.put_u64(redo_retain_from_lsn);
        out.put_u64(catalog.next_table_id);
        // The count's top bit says a collation follows each name; an image
        // without it (written before databases kept one) reads as before.
        out.put_u32(catalog.databases.len() as u32 | DATABASES_HAVE_COLLATIONS);
        for name in catalog.databases.keys() {
            put_str(&mut out, name);
            out.put_u16(catalog.database_collation(name));
        }
        let mut tables: Vec<TableId> = catalog.tables.keys().copied().collect();
        tables.sort_unstable();
        put_count(&mut out, tables.len());
        for id in &tables {
            put_table_def(&mut out, &catalog.tables[id].def());
        }
        let mut gtids = Vec::new();
        commits.executed_gtids.encode_previous_gtids_body(&mut gtids);
        put_bytes(&mut out, &gtids);
        put_count(&mut out, commits.applier_slots.len());
        for (slot, bytes) in &commits.applier_slots {
            out.put_u64(u64::from(*slot));
            put_bytes(&mut out, bytes);
        }
        CheckpointBegin { lsns, catalog_image: out, tables }
    }

    /// The committed rows and counters of `table` as table images of at
    /// most [`SNAPSHOT_PART_BYTES`] (plus one row) each, handed to `part`
    /// one at a time in key order, so a checkpoint of a large table holds
    /// one part in memory, never the table's copy. Each part is a whole
    /// table image (rows and the counters as read after them); loading
    /// them all gives the table. `Ok(false)` when the table has been
    /// dropped (replay drops it again). Holds the table's read lock for
    /// one chunk of rows at a time.
    pub fn snapshot_table_parts<E>(
        &self,
        table: TableId,
        mut part: impl FnMut(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<bool, E> {
        let Ok(table) = self.shared.table(table) else { return Ok(false) };
        let guard = self.shared.views.open(&self.shared.commits);
        let view = ReadView { seq: guard.seq, reader: u64::MAX };
        let mut image = Vec::new();
        let mut resume: Bound<Vec<u8>> = Bound::Unbounded;
        loop {
            image.clear();
            image.extend_from_slice(TABLE_MAGIC);
            // Counters and row count, filled in once the rows are copied.
            image.extend_from_slice(&[0; TABLE_IMAGE_COUNTS_BYTES]);
            let mut row_count = 0u64;
            let data = table.data.read();
            let mut lookup = CommitLookup::new(&self.shared.commits);
            let mut last = None;
            let mut finished = true;
            let range = (resume.as_ref().map(Vec::as_slice), Bound::Unbounded);
            for (copied, (key, chain)) in data.rows.range::<[u8], _>(range).enumerate() {
                if copied == SNAPSHOT_CHUNK_ROWS || image.len() >= SNAPSHOT_PART_BYTES {
                    finished = false;
                    break;
                }
                last = Some(key);
                if let Some(row) = live_row(visible(chain, &view, &mut lookup)) {
                    put_bytes(&mut image, key);
                    crate::codec::encode_row(row, &mut image);
                    row_count += 1;
                }
            }
            // Counters read after the rows: they only grow, and replay raises them.
            let mut counts = Vec::with_capacity(TABLE_IMAGE_COUNTS_BYTES);
            counts.put_u64(table.id);
            counts.put_u64(data.auto_increment_next);
            counts.put_u64(data.hidden_row_id_next);
            counts.put_u64(row_count);
            image[TABLE_MAGIC.len()..TABLE_MAGIC.len() + TABLE_IMAGE_COUNTS_BYTES].copy_from_slice(&counts);
            if !finished {
                resume = Bound::Excluded(last.expect("an unfinished part has a last key").clone());
            }
            drop(data);
            // Handed over without the table's lock: writing it may wait on the disk.
            part(&image)?;
            if finished {
                return Ok(true);
            }
        }
    }

    /// A whole-engine image: a checkpoint taken in one call.
    pub fn snapshot(&self) -> Vec<u8> {
        let begin = self.begin_checkpoint();
        let mut images: Vec<Vec<u8>> = Vec::new();
        for &id in &begin.tables {
            let _ = self.snapshot_table_parts(id, |part| -> std::result::Result<(), std::convert::Infallible> {
                images.push(part.to_vec());
                Ok(())
            });
        }
        let mut out = ENGINE_MAGIC.to_vec();
        put_bytes(&mut out, &begin.catalog_image);
        put_count(&mut out, images.len());
        for image in &images {
            put_bytes(&mut out, image);
        }
        out
    }

    /// An engine loaded from [`Engine::snapshot`]'s bytes.
    pub fn from_snapshot(config: EngineConfig, redo: Arc<dyn RedoSink>, image: &[u8]) -> Result<(Engine, CheckpointLsns)> {
        let mut reader = ByteReader::new(image);
        expect_magic(&mut reader, ENGINE_MAGIC)?;
        let catalog_image = reader.bytes("catalog image")?;
        let count = reader.count(4, "table images")?;
        let images = (0..count).map(|_| reader.bytes("table image")).collect::<Result<Vec<_>>>()?;
        reader.finish("engine image")?;
        Engine::restore(config, redo, catalog_image, &images)
    }

    /// An engine loaded from a checkpoint's catalog image and its table
    /// images (any subset: a table without one starts empty). Replay redo
    /// from the returned start LSN next, before serving transactions.
    pub fn restore(
        config: EngineConfig,
        redo: Arc<dyn RedoSink>,
        catalog_image: &[u8],
        table_images: &[&[u8]],
    ) -> Result<(Engine, CheckpointLsns)> {
        let mut reader = ByteReader::new(catalog_image);
        expect_magic(&mut reader, CATALOG_MAGIC)?;
        let lsns = CheckpointLsns { start_lsn: reader.u64("start lsn")?, redo_retain_from_lsn: reader.u64("retain lsn")? };
        let mut catalog = Catalog::new();
        let next_table_id = reader.u64("next table id")?;
        let flagged_count = reader.u32("databases")?;
        let with_collations = flagged_count & DATABASES_HAVE_COLLATIONS != 0;
        let count = (flagged_count & !DATABASES_HAVE_COLLATIONS) as usize;
        if count.saturating_mul(4) > reader.remaining() {
            return Err(EngineError::corrupt(format!("databases: {count} cannot fit {} bytes", reader.remaining())));
        }
        for _ in 0..count {
            let name = reader.string("database name")?;
            if with_collations {
                catalog.set_database_collation(&name, reader.u16("database collation")?);
            }
            catalog.databases.insert(name, Default::default());
        }
        for _ in 0..reader.count(8, "tables")? {
            let def = read_table_def(&mut reader)?;
            if !catalog.databases.contains_key(&def.database) || catalog.tables.contains_key(&def.id) {
                return Err(EngineError::corrupt(format!("table {} (id {})", def.qualified_name(), def.id)));
            }
            catalog.insert_table(Arc::new(Table::new(def.clone())), &def);
        }
        catalog.next_table_id = catalog.next_table_id.max(next_table_id);
        let gtids = GtidSet::decode_previous_gtids_body(reader.bytes("executed gtids")?)
            .map_err(|error| EngineError::corrupt(format!("executed gtids: {error}")))?;
        let mut commits = CommitState::new();
        if !reader.is_empty() {
            for _ in 0..reader.count(12, "applier slots")? {
                let slot = u32::try_from(reader.u64("applier slot")?).map_err(|_| EngineError::corrupt("applier slot number"))?;
                commits.applier_slots.insert(slot, reader.bytes("applier slot bytes")?.to_vec());
            }
        }
        reader.finish("catalog image")?;
        commits.executed_gtids = gtids;
        let engine = Engine::from_parts(config, redo, catalog, commits);
        for image in table_images {
            engine.load_table_image(image)?;
        }
        Ok((engine, lsns))
    }

    fn load_table_image(&self, image: &[u8]) -> Result<()> {
        let mut reader = ByteReader::new(image);
        expect_magic(&mut reader, TABLE_MAGIC)?;
        let id = reader.u64("table id")?;
        let table = self.shared.table(id).map_err(|_| EngineError::corrupt(format!("image of unknown table {id}")))?;
        let mut data = table.data.write();
        let def = Arc::clone(&data.def);
        data.auto_increment_next = data.auto_increment_next.max(reader.u64("auto_increment next")?);
        data.hidden_row_id_next = data.hidden_row_id_next.max(reader.u64("hidden row id next")?);
        let row_count = reader.u64("row count")?;
        for _ in 0..row_count {
            let key = reader.bytes("row key")?.to_vec();
            let row = read_row(&mut reader)?;
            // Check what was read before trusting it: the key must be the
            // one the row's own values give.
            let expected_key = if def.has_primary_key() {
                (row.len() == def.columns.len()).then(|| clustered_key(&def, &row, None))
            } else {
                (row.len() == def.columns.len()).then_some(()).and(hidden_row_id(&key)).map(|_| key.clone())
            };
            if expected_key.as_ref() != Some(&key) || data.rows.contains_key(&key) {
                return Err(EngineError::corrupt(format!("row of table {} does not match its key", def.qualified_name())));
            }
            data.raise_counters(&row, &key);
            let version = Version::committed(RESTORED_WRITER, RESTORED_COMMIT_SEQ, Some(Arc::new(row)));
            data.push_version(&key, version, &self.shared.memory, None).expect("unchecked pushes cannot fail");
        }
        Ok(reader.finish("table image")?)
    }
}

fn expect_magic(reader: &mut ByteReader<'_>, magic: &[u8; 8]) -> Result<()> {
    if reader.take(8, "magic")? != magic {
        return Err(EngineError::corrupt(format!("not a {} image", String::from_utf8_lossy(magic))));
    }
    Ok(())
}
