//! What a server remembers between requests about who a token is and what a person may do with
//! a thread, so that a signed-in person's tool call does not pay two more reads first (on
//! PostgreSQL, two round trips before a two-trip call).
//!
//! Remembering is only safe while every change reaches this process at once: a change made
//! here forgets everything before it returns, and one made by another replica or by `haico
//! user` arrives as a ring of the doorbell ([`PeopleBell`]). So nothing is remembered while the
//! bell does not hear (`HAICO_LISTEN_NOTIFY=off`, a pooler, the connection down), and nothing
//! is remembered longer than [`ACCESS_RECHECK`], the delay an open stream already allows for a
//! change it was not told about (a replica that died between its commit and its ring).
//!
//! A read that started before a change must not store its answer after the change forgot
//! everything: the answer is kept only if no change happened since the read began (the
//! `epoch`, checked under the same lock that forgetting takes).

use std::{
    collections::HashMap,
    hash::Hash,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use haico_store::{ThreadId, User};

/// How often an open stream asks again whether its caller may still read the thread, besides
/// at once after every change of sharing made by this process.
pub const ACCESS_RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// The most answers of each kind kept; past it the oldest are not sorted out, all are dropped
/// (a rare event that costs one read per caller after it).
const MAX_KEPT: usize = 10_000;

/// A thread's owner and the person's role in it, as [`haico_store::PeopleRepo::thread_access`]
/// reads them.
pub(super) type AccessRow = (Option<i64>, Option<String>);

/// How a server hears of, and tells, the changes other processes make to accounts and sharing:
/// the replicas' doorbell on PostgreSQL (`replicas/doorbell.rs`).
pub trait PeopleBell: Send + Sync + std::fmt::Debug {
    /// Whether other processes' changes reach this one now; while they do not, nothing is
    /// remembered between requests.
    fn hears_changes(&self) -> bool;
    /// Tells the other processes that accounts or sharing changed.
    fn announce_change(&self);
}

/// The answers kept, and how changes reach them.
#[derive(Debug)]
pub(super) struct Remembered {
    bell: Arc<dyn PeopleBell>,
    /// Counts the changes seen; an answer read across one is not kept.
    epoch: AtomicU64,
    /// Token digest → its account.
    tokens: Kept<String, User>,
    /// (account, thread) → the thread's owner and the account's role in it.
    access: Kept<(i64, ThreadId), AccessRow>,
}

/// When a read began, to keep its answer only if nothing changed meanwhile.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadBegan(u64);

impl Remembered {
    pub(super) fn new(bell: Arc<dyn PeopleBell>) -> Self {
        Self {
            bell,
            epoch: AtomicU64::new(0),
            tokens: Kept::default(),
            access: Kept::default(),
        }
    }

    /// Marks the start of a read whose answer may be kept.
    pub(super) fn read_begins(&self) -> ReadBegan {
        ReadBegan(self.epoch.load(Ordering::Acquire))
    }

    /// The account of a token digest, if known and fresh.
    pub(super) fn token(&self, digest: &str) -> Option<User> {
        self.usable().then(|| self.tokens.get(digest))?
    }

    /// Keeps the account a token digest belongs to.
    pub(super) fn keep_token(&self, began: ReadBegan, digest: &str, user: &User) {
        if self.usable() {
            self.tokens
                .put(&self.epoch, began, digest.to_string(), user.clone());
        }
    }

    /// The owner of `thread` and `user`'s role in it, if known and fresh.
    pub(super) fn access(&self, user: i64, thread: &ThreadId) -> Option<AccessRow> {
        self.usable()
            .then(|| self.access.get(&(user, thread.clone())))?
    }

    /// Keeps the owner of `thread` and `user`'s role in it. Only found threads are kept: one
    /// that does not exist yet may be made a moment later.
    pub(super) fn keep_access(
        &self,
        began: ReadBegan,
        user: i64,
        thread: &ThreadId,
        row: &AccessRow,
    ) {
        if self.usable() {
            self.access
                .put(&self.epoch, began, (user, thread.clone()), row.clone());
        }
    }

    /// Forgets every answer: accounts or sharing changed.
    pub(super) fn forget(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.tokens.clear();
        self.access.clear();
    }

    /// Tells the other processes that accounts or sharing changed.
    pub(super) fn announce(&self) {
        self.bell.announce_change();
    }

    /// Whether answers may be used and kept now. While the bell does not hear, changes may be
    /// missed, so what was kept before goes too: it must not be trusted once the bell hears
    /// again.
    fn usable(&self) -> bool {
        let hears = self.bell.hears_changes();
        if !hears {
            self.forget();
        }
        hears
    }
}

/// One kind of answer, each with when it was read.
#[derive(Debug)]
struct Kept<K, V>(Mutex<HashMap<K, (V, Instant)>>);

impl<K, V> Default for Kept<K, V> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<K: Hash + Eq, V: Clone> Kept<K, V> {
    fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = self.0.lock().ok()?;
        let (value, at) = map.get(key)?;
        (at.elapsed() < ACCESS_RECHECK).then(|| value.clone())
    }

    fn put(&self, epoch: &AtomicU64, began: ReadBegan, key: K, value: V) {
        let Ok(mut map) = self.0.lock() else {
            return;
        };
        // Under the lock `forget` takes after counting its change: either the change is
        // counted already (and the answer is dropped here) or the map is cleared after this.
        if epoch.load(Ordering::Acquire) != began.0 {
            return;
        }
        if map.len() >= MAX_KEPT {
            map.clear();
        }
        map.insert(key, (value, Instant::now()));
    }

    fn clear(&self) {
        if let Ok(mut map) = self.0.lock() {
            map.clear();
        }
    }
}
