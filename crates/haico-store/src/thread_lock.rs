//! The thread's lock, which every agent write begins with: on PostgreSQL a statement
//! prepared once per connection marks the thread active and answers its row, sent with
//! `BEGIN` and, when it can be, with the write's first statement, in one round trip. When the
//! lock is taken is this module's business; the repositories only send their statements.

use sqlx::PgPool;

use crate::error::DriverError;
use crate::{
    error::Context, error::StoreError, lender::Lent, lender::Named, lender::Rider,
    outage::within_postgres_timeout, query::Value, repository::Head, repository::ThreadHead,
    repository::Transaction, repository::Tx, thread_id::ThreadId,
};
use sqlx::postgres::PgRow;

/// [`Transaction::lock_thread`]'s statement on PostgreSQL, prepared once per connection, for
/// starting an agent's write with its lock in one round trip
/// ([`Database::begin_write_on`](super::Database::begin_write_on)).
/// It also answers the document mode, which the row lock keeps from changing until the call
/// ends, so the document tools need no statement of their own for it.
///
/// The lock is taken by marking the thread active (thread lists sort by the agent's last
/// work), which an agent's write does anyway: one heap-only update of the row instead of a
/// row lock and, at the change log, an update (PostgreSQL's CPU per call 0.92× in the product's
/// A/B). An `UPDATE` of a column no unique index covers takes the same `NO KEY`
/// lock as `SELECT … FOR NO KEY UPDATE`, so person-path inserts still do not wait behind it.
/// `now()` is the transaction's start, which this statement's round trip begins.
pub(crate) const LOCK_THREAD: Named = Named {
    name: "haico_lock_thread",
    params: "",
    definition: "UPDATE threads SET updated_at = now() WHERE id = $1 \
                 RETURNING turn_index, document_mode",
};

/// Begins a transaction on `lent` with the thread's lock, in one round trip: `BEGIN` and the
/// lock, a statement prepared once per connection so the server does not parse it each time.
/// Answers the thread's row, `None` when there is no such thread.
pub(crate) async fn lock_thread(
    pool: &PgPool,
    lent: &mut Lent,
    thread: &ThreadId,
) -> Result<Option<ThreadHead>, StoreError> {
    lock_thread_with(pool, lent, "BEGIN", thread).await
}

/// [`lock_thread`], the transaction begun with `begin` (which may end one first:
/// `ROLLBACK; BEGIN`).
pub(crate) async fn lock_thread_with(
    pool: &PgPool,
    lent: &mut Lent,
    begin: &str,
    thread: &ThreadId,
) -> Result<Option<ThreadHead>, StoreError> {
    let begin = async {
        let row = lent
            .begin_with(begin, &LOCK_THREAD, thread.as_str())
            .await?;
        row.map(|row| head_of(&row)).transpose()
    };
    within_postgres_timeout(pool, begin)
        .await?
        .context("starting a write transaction")
}

/// A thread's row as the lock statement answers it (`turn_index`, `document_mode`).
pub(crate) fn head_of(row: &PgRow) -> Result<ThreadHead, sqlx::Error> {
    Ok(ThreadHead {
        turn_index: sqlx::Row::try_get(row, 0)?,
        document_mode: crate::panels::DocumentMode::from_stored(sqlx::Row::try_get(row, 1)?),
    })
}

impl Transaction {
    /// Undoes everything this agent write has sent and begins again with the thread's lock
    /// alone, in one round trip (`ROLLBACK; BEGIN; EXECUTE haico_lock_thread(…)`): for a write
    /// made on a guess the lock's answer proved wrong (a document tool writing directly in a
    /// thread that turned out to be in suggest mode). What the writes recorded is forgotten.
    /// Answers the thread's row as now locked, `None` when there is no such thread. Only on
    /// PostgreSQL, where an agent write can have run ahead of the lock's answer.
    pub async fn start_over(
        &mut self,
        thread: &ThreadId,
    ) -> Result<Option<ThreadHead>, StoreError> {
        if !matches!(self.tx, Tx::Postgres(_)) {
            return Err(StoreError::Inconsistent(
                "only a PostgreSQL write can start over".to_string(),
            ));
        }
        self.forget_writes();
        let Tx::Postgres(lent) = &mut self.tx else {
            return Ok(None);
        };
        let pool = lent.pool().clone();
        let head = lock_thread_with(&pool, lent, "ROLLBACK; BEGIN", thread).await?;
        self.head = Head::Known(head.clone());
        Ok(head)
    }

    /// Whether an agent write's lock is still to be taken, by its next statement (which then
    /// rides, boxed where it is awaited so that every other statement's future stays as small
    /// as it was).
    pub fn thread_head_pending(&self) -> bool {
        matches!(self.head, Head::Pending { .. })
    }

    /// The locked thread's row, for an agent's write ([`Database::begin_agent_write`]
    /// (crate::Database::begin_agent_write)): as the first statement's round trip read it, or,
    /// when no statement has been sent yet, read now with the lock (one round trip). `None`:
    /// no such thread. Outside an agent's write there is nothing to answer: `None`.
    pub async fn thread_head(&mut self) -> Result<Option<ThreadHead>, StoreError> {
        match &self.head {
            Head::Untracked => Ok(None),
            Head::Known(head) => Ok(head.clone()),
            Head::Pending { thread, pool } => {
                let Tx::Postgres(lent) = &mut self.tx else {
                    return Ok(None);
                };
                let head = lock_thread(pool, lent, thread).await?;
                self.head = Head::Known(head.clone());
                Ok(head)
            }
        }
    }

    /// For an agent write whose thread's lock is still to be taken: sends this first
    /// statement with `BEGIN` and the lock, in one round trip
    /// ([`Lent::begin_with_then`](Lent::begin_with_then)), and answers its rows
    /// and how many rows it changed. `None` otherwise, the statement unsent (and when its
    /// parameters cannot be written inline, after taking the lock alone), for the caller to
    /// send as usual. A missing thread fails it with [`DriverError::NoThread`], whatever the
    /// statement itself did.
    pub(crate) async fn ride(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Option<(Vec<PgRow>, u64)>, DriverError> {
        if !self.thread_head_pending() {
            return Ok(None);
        }
        let Head::Pending { thread, pool } = std::mem::replace(&mut self.head, Head::Untracked)
        else {
            return Ok(None);
        };
        let Tx::Postgres(lent) = &mut self.tx else {
            return Ok(None);
        };
        let rider = Rider { sql, params };
        let ride = lent.begin_with_then("BEGIN", &LOCK_THREAD, thread.as_str(), rider);
        let ridden = within_postgres_timeout(&pool, ride)
            .await
            .map_err(|err| DriverError::Locking(Box::new(err)))??;
        let Some(ridden) = ridden else {
            // Not sent (a NUL in a parameter): the lock alone, then the statement as usual,
            // where the server refuses the NUL as it always has.
            let head = lock_thread(&pool, lent, &thread)
                .await
                .map_err(|err| DriverError::Locking(Box::new(err)))?;
            let found = head.is_some();
            self.head = Head::Known(head);
            return if found {
                Ok(None)
            } else {
                Err(DriverError::NoThread)
            };
        };
        let head = ridden.head.as_ref().map(head_of).transpose()?;
        let found = head.is_some();
        self.head = Head::Known(head);
        if !found {
            return Err(DriverError::NoThread);
        }
        Ok(Some(ridden.rider?))
    }
}
