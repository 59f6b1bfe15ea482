//! [`Transaction`]: one open transaction (begin, commit, rollback, the engine it runs on, what
//! its writes did), shared by the repositories.
//!
//! Each aggregate declares its repository in its own file (`plan.rs`: `repository!(PlanRepo,
//! plan)`, reached as `tx.plan()`) and writes its queries there, through `query.rs`: a query is
//! written once and runs on both engines (both accept `$N` placeholders), inline on SQLite's
//! connections and through sqlx on PostgreSQL; where the SQL must differ, the method picks it
//! by [`Backend`].

use crate::{
    error::Context, error::StoreError, journal::Journal, lender::Lent, readers::Reader,
    sqlite::SqliteError, writer::Held,
};
use crate::{panels::Panel, panels::PanelSet, thread_id::ThreadId};

/// Which database engine a repository talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

pub(crate) enum Tx {
    Sqlite(SqliteConn),
    /// A lent connection: inside the transaction it began, or in autocommit mode.
    Postgres(Lent),
}

/// A SQLite repository's connection: one of the readers, or the one write connection. Both
/// run their statements on the caller's thread.
pub(crate) enum SqliteConn {
    Reader(Reader),
    Writer(Held),
}

impl SqliteConn {
    /// The connection, for statements run inline on this thread.
    pub(crate) fn inline(&self) -> Result<&rusqlite::Connection, SqliteError> {
        match self {
            SqliteConn::Reader(reader) => reader.inline(),
            SqliteConn::Writer(held) => held.inline(),
        }
    }

    async fn commit(self) -> Result<(), SqliteError> {
        match self {
            SqliteConn::Reader(reader) => reader.finish().await,
            SqliteConn::Writer(held) => held.commit().await,
        }
    }

    async fn rollback(self) -> Result<(), SqliteError> {
        match self {
            SqliteConn::Reader(reader) => reader.finish().await,
            SqliteConn::Writer(held) => held.rollback().await,
        }
    }
}

/// The workspace's queries inside one transaction. The tool runtime opens one per call and
/// commits or rolls it back; tool bodies only call its methods. It records which panels its
/// writes touched, so the caller can announce exactly those.
pub struct Transaction {
    pub(crate) tx: Tx,
    changed: PanelSet,
    journal: Journal,
    /// The thread an agent's write holds, and what its row said.
    pub(crate) head: Head,
    /// The transaction's trace span, from its `BEGIN` to its end (see [`traced`](Self::traced)).
    span: tracing::Span,
}

/// What a write reads of its thread as it begins
/// ([`Database::begin_write_on`](super::Database::begin_write_on)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadHead {
    /// The turn counter.
    pub turn_index: i64,
    /// The document mode. Under an agent's lock it holds until the call ends, so the document
    /// tools take it from here instead of asking again.
    pub document_mode: crate::panels::DocumentMode,
}

/// An agent write's hold on its thread ([`Database::begin_agent_write`](super::Database::begin_agent_write)).
pub(crate) enum Head {
    /// Not an agent's write: nothing is known or owed.
    Untracked,
    /// PostgreSQL: nothing sent yet. The first statement takes the thread's lock on its way
    /// ([`Lent::begin_with_then`](super::lender::Lent::begin_with_then)), or
    /// [`Transaction::thread_head`] takes it alone; `pool` bounds the wait as `begin` would.
    Pending {
        thread: ThreadId,
        pool: sqlx::PgPool,
    },
    /// The lock is held; the thread's row as it read (`None`: no such thread).
    Known(Option<ThreadHead>),
}

impl Transaction {
    /// Reads on one of SQLite's read connections: inside a snapshot, or in autocommit mode.
    pub(crate) fn sqlite_reader(reader: Reader) -> Self {
        Self::over(Tx::Sqlite(SqliteConn::Reader(reader)))
    }

    /// A write transaction on SQLite's write connection.
    pub(crate) fn sqlite_writer(held: Held) -> Self {
        Self::over(Tx::Sqlite(SqliteConn::Writer(held)))
    }

    /// A transaction on a lent PostgreSQL connection (begun by the caller).
    pub(crate) fn postgres(lent: Lent) -> Self {
        Self::over(Tx::Postgres(lent))
    }

    fn over(tx: Tx) -> Self {
        Self {
            tx,
            changed: PanelSet::default(),
            journal: Journal::default(),
            head: Head::Untracked,
            span: tracing::Span::none(),
        }
    }

    /// The same transaction, timed by `span` (made before its `BEGIN` was sent, by
    /// [`transaction_span`]).
    pub(crate) fn traced(mut self, span: tracing::Span) -> Self {
        self.span = span;
        self
    }

    /// The same transaction, holding `head`.
    pub(crate) fn holding(mut self, head: Head) -> Self {
        self.head = head;
        self
    }

    /// Forgets what this transaction's writes recorded (the panels they changed, the
    /// document's journal), for a write that starts over.
    pub(crate) fn forget_writes(&mut self) {
        self.changed = PanelSet::default();
        self.journal = Journal::default();
    }

    /// Which engine this transaction runs on.
    pub fn backend(&self) -> Backend {
        match self.tx {
            Tx::Sqlite(_) => Backend::Sqlite,
            Tx::Postgres(_) => Backend::Postgres,
        }
    }

    /// The panels written so far in this transaction.
    pub fn changed(&self) -> PanelSet {
        self.changed
    }

    /// Records that a write touched `panel`.
    pub(crate) fn mark(&mut self, panel: Panel) {
        self.changed.insert(panel);
    }

    /// What this transaction's writes did to each panel, so far.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The journal, for the writes to record into.
    pub(crate) fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }

    /// Makes every write of this transaction durable and returns the panels it touched.
    pub async fn commit(self) -> Result<PanelSet, StoreError> {
        let changed = self.changed;
        let span = self.span;
        let committed = match self.tx {
            Tx::Sqlite(conn) => conn.commit().await.context("committing"),
            Tx::Postgres(conn) => conn.commit().await.context("committing"),
        };
        span.record(
            "haico.db.outcome",
            if committed.is_ok() {
                "commit"
            } else {
                "failed"
            },
        );
        if committed.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        committed?;
        Ok(changed)
    }

    /// Discards every write of this transaction.
    pub async fn rollback(self) -> Result<(), StoreError> {
        self.span.record("haico.db.outcome", "rollback");
        match self.tx {
            Tx::Sqlite(conn) => conn.rollback().await.context("rolling back"),
            Tx::Postgres(conn) => conn.rollback().await.context("rolling back"),
        }
    }
}

/// The span of one transaction: a `debug` span, so it exists only for a subscriber that asks
/// for it (haico's trace export does; the logs do not), and costs nothing otherwise.
pub(crate) fn transaction_span(backend: Backend, access: Access) -> tracing::Span {
    // Names and values are static: a span per call should cost no allocation of its own.
    let (name, system) = match (backend, access) {
        (Backend::Sqlite, Access::Write) => ("sqlite write", "sqlite"),
        (Backend::Sqlite, Access::Read) => ("sqlite read", "sqlite"),
        (Backend::Postgres, Access::Write) => ("postgresql write", "postgresql"),
        (Backend::Postgres, Access::Read) => ("postgresql read", "postgresql"),
    };
    tracing::debug_span!(
        "transaction",
        otel.name = name,
        db.system.name = system,
        haico.db.outcome = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// What a transaction may do, as its span names it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Access {
    Read,
    Write,
}

/// Declares one aggregate's repository: its queries, reached from the shared transaction as
/// `tx.$accessor()` (`tx.plan().insert_steps(…)`), each aggregate's in its own file. A
/// repository borrows the transaction and derefs to it, so its queries reach the shared
/// helpers (`fetch_one`, `mark`, the journal) and other aggregates' repositories (`self
/// .threads()…`) without a second borrow; it costs nothing at run time and changes no SQL.
macro_rules! repository {
    ($(#[$doc:meta])* $name:ident, $accessor:ident) => {
        $(#[$doc])*
        pub struct $name<'t>(&'t mut $crate::repository::Transaction);

        impl $crate::repository::Transaction {
            #[doc = concat!("The [`", stringify!($name), "`] of this transaction.")]
            pub fn $accessor(&mut self) -> $name<'_> {
                $name(self)
            }
        }

        impl std::ops::Deref for $name<'_> {
            type Target = $crate::repository::Transaction;

            fn deref(&self) -> &Self::Target {
                self.0
            }
        }

        impl std::ops::DerefMut for $name<'_> {
            fn deref_mut(&mut self) -> &mut Self::Target {
                self.0
            }
        }
    };
}
pub(crate) use repository;

/// The current time, the one clock every row's timestamps come from.
pub(crate) fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}
