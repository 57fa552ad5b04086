//! The source's side of semi-synchronous replication: which replicas
//! acknowledged what, the commit-stage wait (binlog's `ReplicaAcks`), the
//! fall-back to asynchronous replication after `rpl_semi_sync_source_timeout`
//! and the way back, and the `Rpl_semi_sync_source_*` counters.
//!
//! States (`Rpl_semi_sync_source_status`):
//!
//! | state | a commit | leaves it when |
//! |---|---|---|
//! | disabled (`enabled` OFF) | does not wait | SET GLOBAL ... enabled = ON → ON |
//! | ON | waits until `wait_for_replica_count` replicas acknowledged a position ≥ its end, or the timeout | the timeout passes → OFF |
//! | OFF (fallen back) | does not wait, counts as `_no_tx` | as many replicas acknowledged the last commit's end → ON |
//!
//! A wait with no semi-synchronous replica connected waits the timeout too
//! (MySQL's `rpl_semi_sync_source_wait_no_replica = ON`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use binlog::{AckWaitPoint, ReplicaAcks};
use parking_lot::{Condvar, Mutex};

use super::position::LogPosition;

/// `rpl_semi_sync_source_timeout`'s default (ms), MySQL's.
pub const TIMEOUT_DEFAULT_MS: u64 = 10_000;

/// The settings, as SET GLOBAL leaves them.
#[derive(Debug)]
struct Settings {
    enabled: AtomicBool,
    timeout_ms: AtomicU64,
    wait_for_replica_count: AtomicU32,
    /// 0 = AFTER_SYNC, 1 = AFTER_COMMIT.
    wait_point: AtomicU8,
}

#[derive(Default)]
struct State {
    /// Fallen back to asynchronous replication (after a timeout).
    switched_off: bool,
    /// Each connected semi-synchronous dump's latest acknowledgement, by
    /// connection id (`None` until its first).
    acked: BTreeMap<u32, Option<LogPosition>>,
    /// The end of the last transaction a committer asked about: what a
    /// replica must reach for the source to switch back on.
    last_commit: Option<LogPosition>,
    /// Committers waiting now.
    waiting_sessions: u64,
}

impl State {
    fn acknowledged_by(&self, target: &LogPosition) -> u32 {
        self.acked.values().filter(|acked| acked.as_ref().is_some_and(|acked| acked >= target)).count() as u32
    }
}

#[derive(Default)]
struct Counters {
    yes_tx: AtomicU64,
    no_tx: AtomicU64,
    no_times: AtomicU64,
    tx_waits: AtomicU64,
    tx_wait_us: AtomicU64,
    net_waits: AtomicU64,
    net_wait_us: AtomicU64,
}

/// Semi-synchronous replication on the source; one per server.
pub struct SemiSyncSource {
    settings: Settings,
    state: Mutex<State>,
    acked: Condvar,
    counters: Counters,
}

impl std::fmt::Debug for SemiSyncSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemiSyncSource").field("settings", &self.settings).field("on", &self.is_on()).finish()
    }
}

impl Default for SemiSyncSource {
    fn default() -> Self {
        SemiSyncSource {
            settings: Settings {
                enabled: AtomicBool::new(false),
                timeout_ms: AtomicU64::new(TIMEOUT_DEFAULT_MS),
                wait_for_replica_count: AtomicU32::new(1),
                wait_point: AtomicU8::new(0),
            },
            state: Mutex::new(State::default()),
            acked: Condvar::new(),
            counters: Counters::default(),
        }
    }
}

impl SemiSyncSource {
    /// `rpl_semi_sync_source_enabled`. Turning it on starts in the ON
    /// state; turning it off releases every waiting committer.
    pub fn set_enabled(&self, enabled: bool) {
        let mut state = self.state.lock();
        let was = self.settings.enabled.swap(enabled, Ordering::AcqRel);
        if enabled && !was {
            state.switched_off = false;
        }
        drop(state);
        self.acked.notify_all();
    }

    pub fn enabled(&self) -> bool {
        self.settings.enabled.load(Ordering::Acquire)
    }

    /// `rpl_semi_sync_source_timeout`, in milliseconds.
    pub fn set_timeout(&self, timeout: Duration) {
        self.settings.timeout_ms.store(timeout.as_millis() as u64, Ordering::Release);
        self.acked.notify_all();
    }

    /// `rpl_semi_sync_source_wait_for_replica_count` (at least 1).
    pub fn set_wait_for_replica_count(&self, count: u32) {
        self.settings.wait_for_replica_count.store(count.max(1), Ordering::Release);
        self.acked.notify_all();
    }

    /// `rpl_semi_sync_source_wait_point`.
    pub fn set_wait_point(&self, point: AckWaitPoint) {
        let code = match point {
            AckWaitPoint::AfterSync => 0,
            AckWaitPoint::AfterCommit => 1,
        };
        self.settings.wait_point.store(code, Ordering::Release);
    }

    /// `Rpl_semi_sync_source_status`: enabled and not fallen back.
    pub fn is_on(&self) -> bool {
        self.enabled() && !self.state.lock().switched_off
    }

    /// A dump of a semi-synchronous reader started (connection id).
    pub fn add_replica(&self, connection_id: u32) {
        self.state.lock().acked.insert(connection_id, None);
    }

    /// ... and ended.
    pub fn remove_replica(&self, connection_id: u32) {
        self.state.lock().acked.remove(&connection_id);
    }

    /// A replica acknowledged `ack`; `round_trip` is the time since the
    /// dump sent the event it acknowledges, when known.
    pub fn acknowledge(&self, connection_id: u32, ack: LogPosition, round_trip: Option<Duration>) {
        if let Some(round_trip) = round_trip {
            self.counters.net_waits.fetch_add(1, Ordering::Relaxed);
            self.counters.net_wait_us.fetch_add(round_trip.as_micros() as u64, Ordering::Relaxed);
        }
        let mut state = self.state.lock();
        let Some(acked) = state.acked.get_mut(&connection_id) else { return };
        if acked.as_ref().is_none_or(|previous| ack > *previous) {
            *acked = Some(ack);
        }
        if state.switched_off && self.enabled() {
            let count = self.settings.wait_for_replica_count.load(Ordering::Acquire);
            let caught_up = match &state.last_commit {
                Some(last) => state.acknowledged_by(last) >= count,
                None => true,
            };
            if caught_up {
                state.switched_off = false;
                tracing::info!("semi-synchronous replication switched ON: a replica caught up");
            }
        }
        drop(state);
        self.acked.notify_all();
    }

    /// The `Rpl_semi_sync_source_*` status rows (with MariaDB's
    /// `Rpl_semi_sync_master_*` names too).
    pub fn status(&self) -> Vec<(&'static str, String)> {
        let state = self.state.lock();
        let on = self.enabled() && !state.switched_off;
        let clients = state.acked.len();
        let waiting = state.waiting_sessions;
        drop(state);
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let average = |total: u64, count: u64| total.checked_div(count).unwrap_or(0);
        let counters = &self.counters;
        // (MySQL 8.4's name, MariaDB's name, value)
        let values = [
            ("Rpl_semi_sync_source_clients", "Rpl_semi_sync_master_clients", clients.to_string()),
            (
                "Rpl_semi_sync_source_net_avg_wait_time",
                "Rpl_semi_sync_master_net_avg_wait_time",
                average(load(&counters.net_wait_us), load(&counters.net_waits)).to_string(),
            ),
            ("Rpl_semi_sync_source_net_wait_time", "Rpl_semi_sync_master_net_wait_time", load(&counters.net_wait_us).to_string()),
            ("Rpl_semi_sync_source_net_waits", "Rpl_semi_sync_master_net_waits", load(&counters.net_waits).to_string()),
            ("Rpl_semi_sync_source_no_times", "Rpl_semi_sync_master_no_times", load(&counters.no_times).to_string()),
            ("Rpl_semi_sync_source_no_tx", "Rpl_semi_sync_master_no_tx", load(&counters.no_tx).to_string()),
            ("Rpl_semi_sync_source_status", "Rpl_semi_sync_master_status", if on { "ON" } else { "OFF" }.to_string()),
            (
                "Rpl_semi_sync_source_tx_avg_wait_time",
                "Rpl_semi_sync_master_tx_avg_wait_time",
                average(load(&counters.tx_wait_us), load(&counters.tx_waits)).to_string(),
            ),
            ("Rpl_semi_sync_source_tx_wait_time", "Rpl_semi_sync_master_tx_wait_time", load(&counters.tx_wait_us).to_string()),
            ("Rpl_semi_sync_source_tx_waits", "Rpl_semi_sync_master_tx_waits", load(&counters.tx_waits).to_string()),
            ("Rpl_semi_sync_source_wait_sessions", "Rpl_semi_sync_master_wait_sessions", waiting.to_string()),
            ("Rpl_semi_sync_source_yes_tx", "Rpl_semi_sync_master_yes_tx", load(&counters.yes_tx).to_string()),
        ];
        let mut rows = Vec::with_capacity(values.len() * 2);
        for (source_name, master_name, value) in values {
            rows.push((master_name, value.clone()));
            rows.push((source_name, value));
        }
        rows
    }
}

impl ReplicaAcks for SemiSyncSource {
    fn wait_point(&self) -> Option<AckWaitPoint> {
        if !self.enabled() {
            return None;
        }
        Some(match self.settings.wait_point.load(Ordering::Acquire) {
            0 => AckWaitPoint::AfterSync,
            _ => AckWaitPoint::AfterCommit,
        })
    }

    fn wait_for_ack(&self, file_name: &str, end_position: u64, transactions: u64) {
        let started = Instant::now();
        let target = LogPosition::new(file_name, end_position);
        let mut state = self.state.lock();
        if state.last_commit.as_ref().is_none_or(|last| target > *last) {
            state.last_commit = Some(target.clone());
        }
        if state.switched_off {
            self.counters.no_tx.fetch_add(transactions, Ordering::Relaxed);
            return;
        }
        state.waiting_sessions += 1;
        let acknowledged = loop {
            let count = self.settings.wait_for_replica_count.load(Ordering::Acquire);
            if state.acknowledged_by(&target) >= count {
                break true;
            }
            if !self.enabled() {
                break false;
            }
            let deadline = started + Duration::from_millis(self.settings.timeout_ms.load(Ordering::Acquire));
            if Instant::now() >= deadline || self.acked.wait_until(&mut state, deadline).timed_out() {
                if state.acknowledged_by(&target) >= self.settings.wait_for_replica_count.load(Ordering::Acquire) {
                    break true;
                }
                if self.enabled() && !state.switched_off {
                    state.switched_off = true;
                    self.counters.no_times.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        file_name,
                        end_position,
                        "timeout waiting for a replica's acknowledgement: semi-synchronous replication switched OFF"
                    );
                }
                break false;
            }
        };
        state.waiting_sessions -= 1;
        drop(state);
        if acknowledged {
            // Every transaction of the batch waited this long.
            self.counters.yes_tx.fetch_add(transactions, Ordering::Relaxed);
            self.counters.tx_waits.fetch_add(transactions, Ordering::Relaxed);
            self.counters.tx_wait_us.fetch_add(started.elapsed().as_micros() as u64 * transactions, Ordering::Relaxed);
        } else {
            self.counters.no_tx.fetch_add(transactions, Ordering::Relaxed);
        }
    }
}
