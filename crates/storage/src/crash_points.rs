//! The registry of named crash points, `<crate>::<stage>::<step>`. Each
//! crate that reaches crash points lists its names once (its `ALL`) and
//! names its registry `CrashPoints<ItsPoints>`; the code on the way calls
//! [`CrashPoints::hit`] at each point.
//!
//! With the `fault-injection` feature (test builds), a test arms a point;
//! when execution reaches it the armed action runs (typically: freeze the
//! simulated storage, so nothing after the point becomes durable) and the
//! operation fails with a "crash" error. For tests that kill a real
//! process, the environment variable `BINLOGD_CRASH_POINT=<name>` aborts
//! the process at that point. A point nobody armed costs one atomic load.
//!
//! Without the feature (the release server) the registry is empty and
//! [`CrashPoints::hit`] is `Ok(())`, so a commit passes its points without
//! a lock, a load or a branch, and `BINLOGD_CRASH_POINT` is ignored.

use std::io;
use std::marker::PhantomData;

/// The points a crate knows. Arming a point of another crate's list is
/// caught at once.
pub trait KnownPoints: Send + Sync + 'static {
    const ALL: &'static [&'static str];
}

#[cfg(feature = "fault-injection")]
pub use armed::CrashPoints;

#[cfg(not(feature = "fault-injection"))]
pub use compiled_out::CrashPoints;

#[cfg(feature = "fault-injection")]
mod armed {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use parking_lot::Mutex;

    use super::*;

    type Action = Box<dyn Fn() + Send + Sync>;

    #[derive(Default)]
    struct Registry {
        /// Whether `armed` holds a point: read before any lock, so the
        /// points of a run that armed nothing are not serialized.
        any_armed: AtomicBool,
        armed: Mutex<HashMap<&'static str, (u64, Action)>>,
        fired: Mutex<Vec<&'static str>>,
    }

    /// The armed points of one log (or one process), for the points `K` lists.
    pub struct CrashPoints<K: KnownPoints> {
        registry: Arc<Registry>,
        abort_at: Option<Arc<str>>,
        known: PhantomData<K>,
    }

    impl<K: KnownPoints> Default for CrashPoints<K> {
        fn default() -> Self {
            CrashPoints { registry: Default::default(), abort_at: None, known: PhantomData }
        }
    }

    // Clones share the armed set: the log and its tests hold the same points.
    impl<K: KnownPoints> Clone for CrashPoints<K> {
        fn clone(&self) -> Self {
            CrashPoints { registry: Arc::clone(&self.registry), abort_at: self.abort_at.clone(), known: PhantomData }
        }
    }

    impl<K: KnownPoints> CrashPoints<K> {
        /// Points armed from `BINLOGD_CRASH_POINT` (abort the process there).
        pub fn from_env() -> Self {
            CrashPoints { abort_at: std::env::var("BINLOGD_CRASH_POINT").ok().map(Arc::from), ..Self::default() }
        }

        /// Arms `name`: its `skip`-th passage (0 = the first) runs `action`
        /// and fails the operation.
        pub fn arm(&self, name: &'static str, skip: u64, action: impl Fn() + Send + Sync + 'static) {
            assert!(K::ALL.contains(&name), "unknown crash point {name}");
            let mut armed = self.registry.armed.lock();
            armed.insert(name, (skip, Box::new(action)));
            self.registry.any_armed.store(true, Ordering::Release);
        }

        /// Whether `name` was armed and reached.
        pub fn fired(&self, name: &str) -> bool {
            self.registry.fired.lock().contains(&name)
        }

        /// Called at each named point on the way.
        pub fn hit(&self, name: &'static str) -> io::Result<()> {
            debug_assert!(K::ALL.contains(&name), "unregistered crash point {name}");
            if self.abort_at.as_deref() == Some(name) {
                eprintln!("binlogd: crash point {name} reached, aborting (BINLOGD_CRASH_POINT)");
                std::process::abort();
            }
            if !self.registry.any_armed.load(Ordering::Acquire) {
                return Ok(());
            }
            let mut armed = self.registry.armed.lock();
            if let Some((skip, _)) = armed.get_mut(name) {
                if *skip > 0 {
                    *skip -= 1;
                    return Ok(());
                }
                let (_, action) = armed.remove(name).unwrap();
                // Stored under the lock, so a concurrent `arm` is not lost.
                self.registry.any_armed.store(!armed.is_empty(), Ordering::Release);
                drop(armed);
                self.registry.fired.lock().push(name);
                action();
                return Err(io::Error::other(format!("crash point {name}")));
            }
            Ok(())
        }
    }
}

#[cfg(not(feature = "fault-injection"))]
mod compiled_out {
    use super::*;

    /// No points can be armed in this build; see the module's comment.
    pub struct CrashPoints<K: KnownPoints> {
        known: PhantomData<K>,
    }

    impl<K: KnownPoints> Default for CrashPoints<K> {
        fn default() -> Self {
            CrashPoints { known: PhantomData }
        }
    }

    impl<K: KnownPoints> Clone for CrashPoints<K> {
        fn clone(&self) -> Self {
            Self::default()
        }
    }

    impl<K: KnownPoints> CrashPoints<K> {
        /// The same as `default()`: this build has no crash points to arm.
        pub fn from_env() -> Self {
            Self::default()
        }

        #[inline(always)]
        pub fn hit(&self, name: &'static str) -> io::Result<()> {
            debug_assert!(K::ALL.contains(&name), "unregistered crash point {name}");
            Ok(())
        }
    }
}
