//! Group commit across both logs (`innodb_flush_log_at_trx_commit = 1`).
//!
//! Each log has its own group commit (the redo's write barrier, the
//! binlog's FLUSH/SYNC/COMMIT queues), but chained back to back they split
//! the sessions into cohorts: while one cohort waits for its binlog
//! fdatasync, the next waits for its redo fdatasync, so each fsync serves
//! only a fraction of the sessions and both disks' queues are busy with
//! small groups. This module forms one group for both logs, the way
//! MySQL's binlog leader flushes InnoDB's redo for its whole queue:
//!
//! ```text
//!   prepare (redo record buffered) ──► WAIT for the next group, with the
//!           binlog commit it will need (cache, engine-commit hook)
//!   leader: gather up to `group_commit_gather_max` for the sessions of
//!           the previous group to come back, take every waiting session,
//!           one redo fdatasync up to the group's highest prepare LSN,
//!           then all members' binlog commits as one batch (one FLUSH,
//!           one fdatasync, the engine commits in order in the COMMIT
//!           stage): `BinaryLog::commit_batch`
//!   the leader hands each member its result and ends the group; a
//!   waiting session leads the next. Members are woken as a tree (the
//!   leader wakes two, each of them two more, ...), not one by one
//!   by the leader
//! ```
//!
//! Groups run one at a time, so the redo and binlog fdatasyncs never
//! compete, and sessions that finished the previous group re-join the
//! next one (the gather step) instead of forming a cohort of their own.
//! The prepare record is durable before any member's binlog write, as
//! two-phase commit requires. The leader logs the whole group itself,
//! as MySQL's binlog leader does: were each member to commit on its own,
//! the first to reach the binlog would lead a FLUSH of whoever had arrived
//! and the group would split into two or three binlog fdatasyncs (measured:
//! 2.3 per redo sync at 16 sessions), and every member would wake twice.
//! Arrival order is binlog order.
//!
//! The gather step waits for as many sessions as the previous group had
//! (a lone session never waits), at most `group_commit_gather_max`.

use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use engine::Lsn;
use parking_lot::Mutex;
use redo::{RedoError, RedoLog};

use crate::error::{DatabaseError, Result};
use crate::group_commit_stages::{GroupCommitStages, GroupWake, Stage, StageClock};

/// What a member gets back: the redo sync's failure, or what logging its
/// work gave (`None` for a member that brought no work).
type Outcome<R> = Result<Option<R>>;

/// How a member's place in a group stands.
struct Place<R> {
    /// Taken into a group by its leader: only the outcome is to come.
    taken: bool,
    outcome: Option<Outcome<R>>,
    /// Members this one wakes once it has its outcome (`wake_tree_children`).
    wakes: Vec<Thread>,
    /// Its group's hand-off, told when this member runs again (not set
    /// for the leader).
    wake: Option<Arc<GroupWake>>,
}

struct Waiter<W, R> {
    prepare_lsn: Lsn,
    thread: Thread,
    /// What the leader logs for it after the redo sync (its binlog commit).
    work: Option<W>,
    place: Arc<Mutex<Place<R>>>,
}

struct State<W, R> {
    /// The sessions waiting for the next group, in arrival order (which
    /// becomes their binlog order).
    waiting: Vec<Waiter<W, R>>,
    /// A group is between its leader's redo sync and the end of its
    /// logging.
    busy: bool,
    /// The leader gathering until this many sessions wait.
    gathering: Option<(usize, Thread)>,
    last_group_size: usize,
    /// Members that arrived so far.
    next_arrival: u64,
    /// Every member that arrived before this has had its work logged (or
    /// failed).
    logged_before: u64,
    /// Threads in [`GroupCommit::barrier`].
    barrier_waiters: Vec<Thread>,
    /// When the last group ended, until the next leader takes it.
    last_group_ended: Option<Instant>,
}

impl<W, R> Default for State<W, R> {
    fn default() -> Self {
        State {
            waiting: Vec::new(),
            busy: false,
            gathering: None,
            last_group_size: 0,
            next_arrival: 0,
            logged_before: 0,
            barrier_waiters: Vec::new(),
            last_group_ended: None,
        }
    }
}

/// One group commit for redo and for the work its members bring (`W`,
/// logged together into `R`s: the binlog's commits).
pub(crate) struct GroupCommit<W, R> {
    redo: RedoLog,
    gather_max: Duration,
    state: Mutex<State<W, R>>,
    /// The first failed redo sync's error: every later group fails too.
    failure: Mutex<Option<String>>,
    /// Called by each leader once it has its members, before the redo
    /// sync: from then until the group ends every member waits, so work
    /// handed to another thread here runs on cores that would otherwise
    /// idle through the fsyncs (the engine's purge).
    on_group_start: GroupStartHook,
    /// Where the groups' time goes (`group_commit_stages.rs`).
    stages: StageClock,
}

/// What a leader calls as its group's fsyncs begin (`GroupCommit::new`).
pub(crate) type GroupStartHook = Box<dyn Fn() + Send + Sync>;

/// The database's group: members bring their binlog commit.
pub(crate) type BinlogGroupCommit = GroupCommit<binlog::BatchCommit, Result<binlog::CommitInfo>>;

/// A group's `log`: logs the members' work in order.
pub(crate) type LogGroup<'a, W, R> = &'a dyn Fn(Vec<W>) -> Vec<R>;

impl<W, R> GroupCommit<W, R> {
    pub fn new(redo: RedoLog, gather_max: Duration, on_group_start: GroupStartHook) -> GroupCommit<W, R> {
        GroupCommit {
            redo,
            gather_max,
            state: Mutex::new(State::default()),
            failure: Mutex::new(None),
            on_group_start,
            stages: StageClock::default(),
        }
    }

    /// The groups' stage times so far.
    pub fn stages(&self) -> GroupCommitStages {
        self.stages.snapshot()
    }

    /// Returns once the redo is durable up to `prepare_lsn` (a group's
    /// leader syncs for every member).
    pub fn join(&self, prepare_lsn: Lsn) -> Result<()> {
        self.run(prepare_lsn, None, None, &|| {}).map(drop)
    }

    /// Returns once every member that arrived before has had its work
    /// logged; at once when none is waiting. For a commit that goes to the
    /// log another way (DDL, a promotion) and must not pass commits
    /// ordered before it (a replica hands its commit turn on when a
    /// member is queued: `CommitRequest::on_ordered`).
    pub fn barrier(&self) -> Result<()> {
        let mut state = self.state.lock();
        let arrived = state.next_arrival;
        while state.logged_before < arrived {
            state.barrier_waiters.push(std::thread::current());
            drop(state);
            std::thread::park();
            state = self.state.lock();
        }
        match self.failure.lock().clone() {
            Some(first_error) => Err(DatabaseError::Redo(RedoError::PreviousIo { first_error })),
            None => Ok(()),
        }
    }

    /// Makes the redo durable up to `prepare_lsn`, then logs `work` with
    /// the group's other members' in one call of `log` (whichever member
    /// leads calls its own `log`: every member must pass an equivalent
    /// one), in arrival order; returns this member's result. `on_queued`
    /// is called once the member has its place in that order.
    pub fn commit(&self, prepare_lsn: Lsn, work: W, log: LogGroup<'_, W, R>, on_queued: &dyn Fn()) -> Result<R> {
        let logged = self.run(prepare_lsn, Some(work), Some(log), on_queued)?;
        Ok(logged.expect("a member with work gets its result"))
    }

    fn run(&self, prepare_lsn: Lsn, work: Option<W>, log: Option<LogGroup<'_, W, R>>, on_queued: &dyn Fn()) -> Outcome<R> {
        let place = Arc::new(Mutex::new(Place { taken: false, outcome: None, wakes: Vec::new(), wake: None }));
        let mut state = self.state.lock();
        state.waiting.push(Waiter { prepare_lsn, thread: std::thread::current(), work, place: place.clone() });
        state.next_arrival += 1;
        if let Some((target, leader)) = &state.gathering {
            if state.waiting.len() >= *target {
                leader.unpark();
            }
        }
        // Outside the lock: it may wake another thread.
        drop(state);
        on_queued();
        let mut state = self.state.lock();
        loop {
            {
                let mut place = place.lock();
                if let Some(outcome) = place.outcome.take() {
                    let wakes = std::mem::take(&mut place.wakes);
                    let wake = place.wake.take();
                    drop(place);
                    drop(state);
                    if let Some(wake) = wake {
                        wake.resumed(&self.stages);
                    }
                    for thread in wakes {
                        thread.unpark();
                    }
                    return outcome;
                }
                // In a group: never lead another one (its work is taken).
                if place.taken || state.busy {
                    drop(place);
                    drop(state);
                    std::thread::park();
                    state = self.state.lock();
                    continue;
                }
            }
            // Lead the group being formed.
            state.busy = true;
            let started = Instant::now();
            if let Some(ended) = state.last_group_ended.take() {
                self.stages.add(Stage::BetweenGroups, ended);
            }
            let target = state.last_group_size.max(1);
            if state.waiting.len() < target && !self.gather_max.is_zero() {
                state.gathering = Some((target, std::thread::current()));
                let deadline = Instant::now() + self.gather_max;
                while state.waiting.len() < target {
                    let now = Instant::now();
                    if now >= deadline {
                        self.stages.gather_timed_out();
                        break;
                    }
                    drop(state);
                    std::thread::park_timeout(deadline - now);
                    state = self.state.lock();
                }
                state.gathering = None;
            }
            let mut members = std::mem::take(&mut state.waiting);
            for member in &members {
                member.place.lock().taken = true;
            }
            state.last_group_size = members.len();
            let arrived_before = state.next_arrival;
            drop(state);
            self.stages.add(Stage::Gather, started);
            self.stages.group(members.len());
            (self.on_group_start)();
            let outcomes = self.sync_and_log(&mut members, log);
            let me = std::thread::current().id();
            let others: Vec<&Waiter<W, R>> = members.iter().filter(|member| member.thread.id() != me).collect();
            // Last member first, so a member's children in the wake tree
            // (higher nodes) have their outcomes before it has its own: a
            // member can wake before it is woken (`park` returns on a
            // token an earlier `unpark` left) and then wakes its children
            // at once; a child that found no outcome would go back to
            // sleep with its one wake-up spent, and every member under it
            // with it.
            let handed = Instant::now();
            let wake = Arc::new(GroupWake::new(others.len()));
            let mut node = others.len();
            for (member, outcome) in members.iter().zip(outcomes).rev() {
                let mut place = member.place.lock();
                place.outcome = Some(outcome);
                if member.thread.id() != me {
                    place.wakes = wake_tree_children(node, others.len()).map(|child| others[child - 1].thread.clone()).collect();
                    place.wake = Some(wake.clone());
                    node -= 1;
                }
            }
            self.end_group(arrived_before);
            self.stages.add(Stage::HandOff, handed);
            self.stages.add(Stage::Leader, started);
            for child in wake_tree_children(0, others.len()) {
                others[child - 1].thread.unpark();
            }
            state = self.state.lock();
        }
    }

    /// Ends the current group: the first session of the forming group
    /// becomes its leader.
    fn end_group(&self, arrived_before: u64) {
        let mut state = self.state.lock();
        state.busy = false;
        state.last_group_ended = Some(Instant::now());
        state.logged_before = state.logged_before.max(arrived_before);
        if let Some(next) = state.waiting.first() {
            next.thread.unpark();
        }
        for waiter in state.barrier_waiters.drain(..) {
            waiter.unpark();
        }
    }

    /// The leader's work for `members`: one redo fdatasync up to their
    /// highest prepare LSN, then one `log` call for all their work.
    fn sync_and_log(&self, members: &mut [Waiter<W, R>], log: Option<LogGroup<'_, W, R>>) -> Vec<Outcome<R>> {
        let target_lsn = members.iter().map(|m| m.prepare_lsn).max().expect("the leader is in its group");
        let previous = self.failure.lock().clone();
        let synced = match previous {
            Some(first_error) => Err(first_error),
            None => self.sync_redo(target_lsn).map_err(|error| self.failure.lock().get_or_insert(error.to_string()).clone()),
        };
        if let Err(first_error) = synced {
            return members.iter().map(|_| Err(DatabaseError::Redo(RedoError::PreviousIo { first_error: first_error.clone() }))).collect();
        }
        let had_work: Vec<bool> = members.iter().map(|m| m.work.is_some()).collect();
        let works: Vec<W> = members.iter_mut().filter_map(|m| m.work.take()).collect();
        if works.is_empty() {
            return members.iter().map(|_| Ok(None)).collect();
        }
        let Some(log) = log else {
            return members
                .iter()
                .map(|_| Err(DatabaseError::Unusable { first_error: "a group's leader had no log for its members' work".into() }))
                .collect();
        };
        let logging = Instant::now();
        let mut logged = log(works).into_iter();
        self.stages.add(Stage::Binlog, logging);
        had_work.into_iter().map(|had| Ok(if had { logged.next() } else { None })).collect()
    }
}

impl<W, R> GroupCommit<W, R> {
    /// The leader's redo write and fdatasync up to `lsn`, timed apart
    /// (`sync_up_to` would write first too).
    fn sync_redo(&self, lsn: Lsn) -> redo::Result<()> {
        let started = Instant::now();
        self.redo.wait_written(lsn)?;
        let written = self.stages.add(Stage::RedoWrite, started);
        self.redo.wait_durable(lsn)?;
        self.stages.add(Stage::RedoSync, written);
        Ok(())
    }
}

/// The members node `node` of a group's wake tree wakes: node 0 is the
/// leader, node `i` (1-based) the `i`-th other member, and each node wakes
/// two. The leader waking every member in turn took ~25 µs per wake-up on
/// 2 cores (each woken member preempts it), so the last member of 15 ran
/// ~370 µs after the first; a tree wakes them all in four rounds.
fn wake_tree_children(node: usize, others: usize) -> impl Iterator<Item = usize> {
    (2 * node + 1..=2 * node + 2).filter(move |&child| child <= others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redo::{Durability, Record};
    use std::path::Path;
    use storage::SimStorage;

    fn redo(storage: &SimStorage) -> RedoLog {
        RedoLog::open(Path::new("/redo"), redo::Options::default(), Arc::new(storage.clone()), Default::default()).unwrap().0
    }

    /// Under concurrency every member's prepare is durable when its work
    /// is logged, and each member gets its own work's result. (How many
    /// groups form depends on scheduling; the next test checks grouping
    /// deterministically.)
    #[test]
    fn every_member_is_durable_when_logged_and_gets_its_own_result() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<(u64, Lsn), u64>> = Arc::new(GroupCommit::new(log.clone(), Duration::from_millis(1), Box::new(|| {})));
        let threads: Vec<_> = (0..8u64)
            .map(|n| {
                let (log, groups) = (log.clone(), groups.clone());
                std::thread::spawn(move || {
                    for i in 0..200u64 {
                        let lsn = log.append(&Record::opaque(1, vec![7u8; 40]), Durability::Buffered).unwrap();
                        let durable = log.clone();
                        let logged = groups
                            .commit(
                                lsn,
                                (n * 1000 + i, lsn),
                                &move |works: Vec<(u64, Lsn)>| {
                                    works
                                        .into_iter()
                                        .map(|(id, lsn)| {
                                            assert!(durable.durable_lsn() >= lsn, "logged before its prepare was durable");
                                            id
                                        })
                                        .collect()
                                },
                                &|| {},
                            )
                            .unwrap();
                        assert_eq!(logged, n * 1000 + i, "a member got another member's result");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }

    /// A member can wake before anyone means to wake it: `park` returns on
    /// a token left by an earlier `unpark` (a gathering leader is unparked
    /// by every arrival past its target). One that wakes to find its
    /// outcome wakes its children in the tree at once, so their outcomes
    /// must already be set; otherwise their one wake-up is spent and they
    /// wait forever. Here another thread unparks the members at random
    /// throughout; every commit must still return.
    #[test]
    fn members_woken_early_by_stray_unparks_never_strand_their_children() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        const SESSIONS: usize = 32;
        const COMMITS: u64 = 2000;
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<u64, u64>> = Arc::new(GroupCommit::new(log.clone(), Duration::from_millis(1), Box::new(|| {})));
        let sessions: Arc<Mutex<Vec<std::thread::Thread>>> = Arc::new(Mutex::new(Vec::new()));
        let finished = Arc::new(AtomicUsize::new(0));
        let stop_noise = Arc::new(AtomicBool::new(false));
        for n in 0..SESSIONS as u64 {
            let (log, groups, sessions, finished) = (log.clone(), groups.clone(), sessions.clone(), finished.clone());
            std::thread::spawn(move || {
                sessions.lock().push(std::thread::current());
                for i in 0..COMMITS {
                    let lsn = log.append(&Record::opaque(1, vec![7u8; 40]), Durability::Buffered).unwrap();
                    let logged = groups.commit(lsn, n * 1000 + i, &|works: Vec<u64>| works, &|| {}).unwrap();
                    assert_eq!(logged, n * 1000 + i);
                }
                finished.fetch_add(1, Ordering::SeqCst);
            });
        }
        let noise = {
            let (sessions, stop_noise) = (sessions.clone(), stop_noise.clone());
            std::thread::spawn(move || {
                let mut next = 0usize;
                while !stop_noise.load(Ordering::Relaxed) {
                    let threads = sessions.lock().clone();
                    if !threads.is_empty() {
                        threads[next % threads.len()].unpark();
                        next = next.wrapping_mul(7).wrapping_add(3);
                    }
                    std::thread::yield_now();
                }
            })
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while finished.load(Ordering::SeqCst) < SESSIONS && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop_noise.store(true, Ordering::Relaxed);
        noise.join().unwrap();
        // A stranded member never returns: its session thread is leaked.
        assert_eq!(finished.load(Ordering::SeqCst), SESSIONS, "sessions still waiting for their group's outcome after 60 s");
    }

    #[test]
    fn the_wake_tree_wakes_every_member_once_in_few_rounds() {
        for others in 0..40 {
            let mut woken = vec![0; others + 1];
            let mut rounds = vec![0usize; others + 1];
            for node in 0..=others {
                for child in wake_tree_children(node, others) {
                    assert!(child > node, "a member wakes only later members");
                    woken[child] += 1;
                    rounds[child] = rounds[node] + 1;
                }
            }
            assert!(woken[1..].iter().all(|&count| count == 1), "{others} members: {woken:?}");
            // 15 members (a 16-session group): four rounds.
            let deepest = rounds.iter().max().copied().unwrap_or(0);
            assert!(deepest <= (others + 1).ilog2() as usize + 1, "{others} members took {deepest} rounds");
        }
    }

    #[test]
    fn sessions_waiting_behind_a_busy_group_share_one_sync_and_one_log_call() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<u32, u32>> = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO, Box::new(|| {})));
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let log_calls = Arc::new(Mutex::new(Vec::<Vec<u32>>::new()));
        // The first group stays busy inside its log call.
        let first = {
            let (log, groups, calls) = (log.clone(), groups.clone(), log_calls.clone());
            std::thread::spawn(move || {
                let lsn = log.append(&Record::opaque(1, vec![1u8; 40]), Durability::Buffered).unwrap();
                let release = Mutex::new(release_rx);
                groups.commit(
                    lsn,
                    0,
                    &|works: Vec<u32>| {
                        entered_tx.send(()).unwrap();
                        release.lock().recv().unwrap();
                        calls.lock().push(works.clone());
                        works
                    },
                    &|| {},
                )
            })
        };
        entered_rx.recv().unwrap();
        let syncs_before = log.counters().fsyncs;
        let waiters: Vec<_> = (1..=3u32)
            .map(|n| {
                let (log, groups, calls) = (log.clone(), groups.clone(), log_calls.clone());
                std::thread::spawn(move || {
                    let lsn = log.append(&Record::opaque(1, vec![2u8; 40]), Durability::Buffered).unwrap();
                    let logged = groups
                        .commit(
                            lsn,
                            n,
                            &|works: Vec<u32>| {
                                calls.lock().push(works.clone());
                                works.iter().map(|w| w * 10).collect()
                            },
                            &|| {},
                        )
                        .unwrap();
                    assert_eq!(logged, n * 10);
                    assert!(log.durable_lsn() >= lsn, "released before its prepare was durable");
                })
            })
            .collect();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while groups.state.lock().waiting.len() < 3 {
            assert!(std::time::Instant::now() < deadline, "the sessions never queued behind the busy group");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(log.counters().fsyncs, syncs_before, "no sync while the group is busy");
        release_tx.send(()).unwrap();
        assert_eq!(first.join().unwrap().unwrap(), 0);
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert_eq!(log.counters().fsyncs - syncs_before, 1, "one redo sync for the three waiting sessions");
        let calls = log_calls.lock();
        assert_eq!(calls.len(), 2, "one log call per group: {calls:?}");
        let mut second = calls[1].clone();
        second.sort();
        assert_eq!(second, vec![1, 2, 3]);
    }

    /// A barrier returns only once every member that arrived before it was
    /// logged; members are told their place as soon as they have it.
    #[test]
    fn a_barrier_waits_for_the_members_queued_before_it() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<u32, u32>> = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO, Box::new(|| {})));
        assert!(groups.barrier().is_ok(), "nothing queued: at once");
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let logged = Arc::new(Mutex::new(Vec::<u32>::new()));
        let member = |n: u32, gate: Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>| {
            let (log, groups, logged) = (log.clone(), groups.clone(), logged.clone());
            let (queued_tx, queued_rx) = std::sync::mpsc::channel();
            let thread = std::thread::spawn(move || {
                let lsn = log.append(&Record::opaque(1, vec![1u8; 40]), Durability::Buffered).unwrap();
                let gate = gate.map(Mutex::new);
                groups.commit(
                    lsn,
                    n,
                    &|works: Vec<u32>| {
                        if let Some(gate) = &gate {
                            let gate = gate.lock();
                            gate.0.send(()).unwrap();
                            gate.1.recv().unwrap();
                        }
                        logged.lock().extend(works.iter().copied());
                        works
                    },
                    &|| queued_tx.send(()).unwrap(),
                )
            });
            queued_rx.recv().unwrap();
            thread
        };
        let first = member(1, Some((entered_tx, release_rx)));
        entered_rx.recv().unwrap();
        // Queued behind the busy group: told its place before any sync.
        let second = member(2, None);
        let barrier = {
            let (groups, logged) = (groups.clone(), logged.clone());
            std::thread::spawn(move || {
                groups.barrier().unwrap();
                logged.lock().clone()
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!barrier.is_finished(), "the barrier passed members queued before it");
        release_tx.send(()).unwrap();
        assert_eq!(barrier.join().unwrap(), vec![1, 2], "the barrier returned before the members queued before it were logged");
        assert_eq!(first.join().unwrap().unwrap(), 1);
        assert_eq!(second.join().unwrap().unwrap(), 2);
    }

    #[test]
    fn members_without_work_only_wait_for_the_sync() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<u32, u32>> = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO, Box::new(|| {})));
        let lsn = log.append(&Record::opaque(1, vec![1]), Durability::Buffered).unwrap();
        groups.join(lsn).unwrap();
        assert!(log.durable_lsn() >= lsn);
    }

    #[test]
    fn a_failed_sync_fails_its_group_and_every_later_one() {
        let storage = SimStorage::new();
        let log = redo(&storage);
        let groups: Arc<GroupCommit<u32, u32>> = Arc::new(GroupCommit::new(log.clone(), Duration::ZERO, Box::new(|| {})));
        let lsn = log.append(&Record::opaque(1, vec![1]), Durability::Buffered).unwrap();
        groups.join(lsn).unwrap();
        storage.fail_sync_number(storage.sync_count() + 1);
        let lsn = log.append(&Record::opaque(1, vec![2]), Durability::Buffered).unwrap();
        let never_logged = |_: Vec<u32>| -> Vec<u32> { panic!("logged after a failed redo sync") };
        assert!(groups.commit(lsn, 1, &never_logged, &|| {}).is_err());
        assert!(groups.commit(lsn, 2, &never_logged, &|| {}).is_err(), "later members fail too");
        assert!(groups.barrier().is_err(), "a barrier after a failed sync fails");
    }
}
