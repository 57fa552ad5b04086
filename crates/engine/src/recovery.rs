//! Replaying redo into an engine restored from a checkpoint.
//!
//! Both functions are idempotent over a fuzzy checkpoint (see
//! [`crate::snapshot`]): a change sets the row at its key to its after
//! image, or deletes the row at its key, whatever is there; DDL is applied
//! only if not already in effect. Nothing is checked (no duplicate keys,
//! no memory limit): the changes were checked when first made, and a
//! replay passes through states that mix the image's later rows with
//! earlier changes. Nothing is logged either. Call them before the engine
//! serves transactions: they take no row locks.

use std::sync::Arc;

use binlog_format::Gtid;

use crate::change::RowChange;
use crate::ddl::apply_ddl;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::mvcc::{current, live_row, CommitLookup, Version};
use crate::redo::{ApplierSlot, DdlRecord};
use crate::registry::TrxState;
use crate::table::clustered_key;
use crate::transaction::{IsolationLevel, Status, Transaction, Undo};

impl Engine {
    /// Applies a committed transaction's changes, in order, and adds its
    /// GTID and applier slot, all visible in one step as a live commit
    /// would be. Changes to a table that no longer exists are skipped (a
    /// later record drops it).
    pub fn apply_redo_transaction(&self, changes: &[RowChange], gtid: Option<Gtid>, slot: Option<&ApplierSlot>) -> Result<()> {
        let mut trx = Transaction::new(Arc::clone(&self.shared), IsolationLevel::ReadCommitted);
        for change in changes {
            let Ok(table) = self.shared.table(change.table) else {
                tracing::debug!(table = change.table, "replayed change to a dropped table");
                continue;
            };
            let mut data = table.data.write();
            let def = Arc::clone(&data.def);
            let key_of = |row: &Arc<Vec<binlog_format::Value>>| {
                if row.len() != def.columns.len() || (!def.has_primary_key() && change.hidden_row_id.is_none()) {
                    return Err(EngineError::corrupt(format!("replayed row does not fit {}", def.qualified_name())));
                }
                Ok(clustered_key(&def, row, change.hidden_row_id))
            };
            let before_key = change.before.as_ref().map(key_of).transpose()?;
            let after_key = change.after.as_ref().map(key_of).transpose()?;
            let mut pushed = Vec::new();
            if let Some(before_key) = before_key.filter(|key| Some(key) != after_key.as_ref()) {
                let mut lookup = CommitLookup::new(&self.shared.commits);
                let chain = data.rows.get(&before_key).map(Vec::as_slice).unwrap_or_default();
                if live_row(current(chain, trx.id, &mut lookup)).is_some() {
                    drop(lookup);
                    data.push_version(&before_key, Version::uncommitted(trx.id, None), &self.shared.memory, None)
                        .expect("unchecked pushes cannot fail");
                    pushed.push(before_key);
                }
            }
            if let (Some(after_key), Some(after)) = (after_key, &change.after) {
                let mut lookup = CommitLookup::new(&self.shared.commits);
                let chain = data.rows.get(&after_key).map(Vec::as_slice).unwrap_or_default();
                if live_row(current(chain, trx.id, &mut lookup)) != Some(after) {
                    drop(lookup);
                    data.push_version(&after_key, Version::uncommitted(trx.id, Some(after.clone())), &self.shared.memory, None)
                        .expect("unchecked pushes cannot fail");
                    pushed.push(after_key.clone());
                }
                data.raise_counters(after, &after_key);
            }
            drop(data);
            trx.undo.extend(pushed.into_iter().map(|key| Undo { table: Arc::clone(&table), key }));
        }
        let seq = {
            let mut commits = self.shared.commits.write();
            commits.last_commit_seq += 1;
            let seq = commits.last_commit_seq;
            commits.states.insert(trx.id, TrxState::Committed { seq });
            if let Some(gtid) = gtid {
                commits.executed_gtids.add(gtid);
            }
            if let Some(slot) = slot {
                commits.applier_slots.insert(slot.slot, slot.bytes.clone());
            }
            seq
        };
        // Prepared: so finishing removes the registry entry just added.
        trx.status = Status::Prepared;
        trx.finish_commit(seq);
        Ok(())
    }

    /// Applies a DDL record and sets the applier slot it carries (a
    /// replica worker's position, which commits with the DDL).
    pub fn apply_redo_ddl(&self, record: &DdlRecord, slot: Option<&ApplierSlot>) -> Result<()> {
        let mut catalog = self.shared.catalog.write();
        apply_ddl(&self.shared, &mut catalog, record)?;
        if let Some(slot) = slot {
            self.shared.commits.write().applier_slots.insert(slot.slot, slot.bytes.clone());
        }
        Ok(())
    }
}
