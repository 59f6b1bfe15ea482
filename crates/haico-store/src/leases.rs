//! Turn leases: which process runs each running turn, and until when it vouches for it.
//!
//! A process that runs turns renews the leases of its own turns every few seconds
//! ([`Transaction::renew_leases`]); any process may end a turn whose lease ran out
//! ([`Transaction::expired_turns`], then
//! [`Transaction::expire_turn`]). Times are milliseconds since the Unix epoch on the
//! writer's clock, so replicas' clocks must agree to well within a lease (NTP does).

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{error::Context, error::StoreError, query::params, query::row_shape, repository::now};

/// Who holds a turn, and until when.
#[derive(Debug, Clone, Copy)]
pub struct TurnLease<'a> {
    /// The holder's replica id.
    pub owner: &'a str,
    /// When the lease runs out unless renewed (ms since the epoch).
    pub until_ms: i64,
}

/// A running turn as its owner sees it when renewing.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct HeldTurn {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_index: i64,
    /// Whether someone asked (on any replica) for it to stop.
    pub cancel_requested: bool,
}

/// A running turn whose lease ran out.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ExpiredTurn {
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_index: i64,
    /// The replica that held it, if known.
    pub owner: Option<String>,
}

row_shape!(HeldTurn { thread_id: String, turn_index: i64, cancel_requested: bool } => HeldTurn {
    thread_id,
    turn_index,
    cancel_requested,
});

row_shape!(ExpiredTurn { thread_id: String, turn_index: i64, owner: Option<String> } => ExpiredTurn {
    thread_id,
    turn_index,
    owner,
});

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    now().timestamp_millis()
}

repository!(
    /// Turn leases across replicas.
    LeasesRepo,
    leases
);

impl LeasesRepo<'_> {
    /// Extends the leases of `owner`'s running turns to `until_ms`; returns them, each with
    /// whether a cancel was requested for it.
    pub async fn renew_leases(
        &mut self,
        owner: &str,
        until_ms: i64,
    ) -> Result<Vec<HeldTurn>, StoreError> {
        self.fetch_all(
            "UPDATE turns SET lease_until_ms = $2 WHERE status = 'running' AND owner = $1 \
                 RETURNING thread_id, turn_index, cancel_requested",
            &params![owner, until_ms],
        )
        .await
        .context("renewing turn leases")
    }

    /// Running turns whose lease ran out before `now_ms` (or that never had one), at most
    /// `limit` of them.
    pub async fn expired_turns(
        &mut self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<ExpiredTurn>, StoreError> {
        self.fetch_all(
            "SELECT thread_id, turn_index, owner FROM turns WHERE status = 'running' \
                 AND (lease_until_ms IS NULL OR lease_until_ms < $1) LIMIT $2",
            &params![now_ms, limit],
        )
        .await
        .context("looking for turns whose lease ran out")
    }

    /// Ends the turn as `failed` with `reason` if it still runs and its lease ran out before
    /// `now_ms`; `false` when it does not (its owner renewed or ended it, or another replica
    /// was faster). The row lock makes this exactly-once across replicas.
    pub async fn expire_turn(
        &mut self,
        thread_id: &ThreadId,
        turn_index: i64,
        now_ms: i64,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let at = now();
        let changed = self
            .execute(
                "UPDATE turns SET status = 'failed', error = $4, finished_at = $5 \
                 WHERE thread_id = $1 AND turn_index = $2 AND status = 'running' \
                 AND (lease_until_ms IS NULL OR lease_until_ms < $3)",
                &params![thread_id, turn_index, now_ms, reason, at],
            )
            .await
            .context("ending a turn whose lease ran out")?;
        Ok(changed == 1)
    }

    /// The running turns `owner` holds: a replica that starts again under the same id ends
    /// them at once, knowing nobody runs them any more.
    pub async fn turns_of(&mut self, owner: &str) -> Result<Vec<ExpiredTurn>, StoreError> {
        self.fetch_all(
            "SELECT thread_id, turn_index, owner FROM turns \
                 WHERE status = 'running' AND owner = $1",
            &params![owner],
        )
        .await
        .context("reading this replica's running turns")
    }

    /// Records that someone wants the thread's running turn to stop; returns the turn and
    /// the replica running it, or `None` when no turn runs.
    pub async fn request_cancel(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<(i64, Option<String>)>, StoreError> {
        self.fetch_optional(
            "UPDATE turns SET cancel_requested = TRUE WHERE thread_id = $1 \
                 AND status = 'running' RETURNING turn_index, owner",
            &params![thread_id],
        )
        .await
        .context("asking a turn to stop")
    }
}
