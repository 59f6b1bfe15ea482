//! How the store hands its connections out and takes them back, on both engines: SQLite's one
//! write connection, and PostgreSQL's lent connections, which are kept for the next caller
//! without a check round trip when they come back clean (the store's lender). What must
//! hold: a transaction abandoned half-way (a cancelled request) leaves no lock and no write
//! behind; a failed statement does not spoil the next caller; closing the database finishes
//! while connections are kept, and on SQLite leaves the database file complete and alone.

use crate::common;

use std::time::Duration;

use common::{TestDb, tid};
use haico::store::{Database, InsertAt, NewPlanStep, PoolConfig};

const PATIENCE: Duration = Duration::from_secs(5);

backend_tests! {
    async fn an_abandoned_write_transaction_leaves_no_lock_and_no_write(engine) {
        let t = TestDb::new(engine).await;
        let mut setup = t.db.begin_write().await.unwrap();
        setup.threads().create_thread(&tid("t-held"), "held").await.unwrap();
        setup.commit().await.unwrap();

        // Locks the thread, writes, and is dropped without a commit or a rollback.
        let mut abandoned = t.db.begin_write().await.unwrap();
        assert_eq!(abandoned.threads().lock_thread(&tid("t-held")).await.unwrap(), Some(0));
        abandoned.threads().create_thread(&tid("t-ghost"), "never committed").await.unwrap();
        drop(abandoned);

        // The next writer takes the same lock at once and sees none of that write.
        let next = async {
            let mut repo = t.db.begin_write().await.unwrap();
            assert_eq!(repo.threads().lock_thread(&tid("t-held")).await.unwrap(), Some(0));
            let ghost = repo.threads().get_thread(&tid("t-ghost")).await.unwrap();
            repo.commit().await.unwrap();
            ghost
        };
        let ghost = tokio::time::timeout(PATIENCE, next)
            .await
            .expect("the abandoned transaction still holds the thread's lock");
        assert!(ghost.is_none(), "an uncommitted write was kept: {ghost:?}");

        let mut read = t.db.begin_read().await.unwrap();
        assert!(read.threads().get_thread(&tid("t-ghost")).await.unwrap().is_none());
        read.rollback().await.unwrap();
        t.cleanup().await;
    }

    async fn a_failed_statement_does_not_spoil_the_next_caller(engine) {
        let t = TestDb::new(engine).await;
        let mut setup = t.db.begin_write().await.unwrap();
        setup.threads().create_thread(&tid("t-one"), "one").await.unwrap();
        setup.commit().await.unwrap();

        for round in 0..20 {
            // A statement the database rejects (a step for a thread that does not exist breaks
            // the foreign key), which on PostgreSQL aborts the transaction; then a rollback.
            let mut failing = t.db.begin_write().await.unwrap();
            let step = NewPlanStep { text: "orphan".into(), depth: 0 };
            let at = InsertAt { index: 0, before: None, after: Default::default() };
            let err = failing.plan().insert_steps(&tid("t-none"), at, &[step]).await.unwrap_err();
            assert!(err.to_string().contains("inserting steps"), "round {round}: {err}");
            failing.rollback().await.unwrap();

            // A read outside a transaction on whichever connection comes next answers.
            let mut glance = t.db.autocommit_read().await.unwrap();
            assert!(glance.threads().get_thread(&tid("t-missing")).await.unwrap().is_none());
            glance.rollback().await.unwrap();

            // And the next writer commits normally.
            let mut ok = t.db.begin_write().await.unwrap();
            let id = format!("t-ok-{round}");
            ok.threads().create_thread(&tid(&id), "fine").await.unwrap();
            ok.commit().await.unwrap();
        }
        let mut read = t.db.begin_read().await.unwrap();
        for round in 0..20 {
            let id = format!("t-ok-{round}");
            assert!(read.threads().get_thread(&tid(&id)).await.unwrap().is_some(), "{id} is missing");
        }
        read.rollback().await.unwrap();
        t.cleanup().await;
    }

    async fn closing_finishes_while_connections_are_kept(engine) {
        let t = TestDb::new(engine).await;
        // Several callers at once, so more than one connection is kept afterwards.
        write_and_read_at_once(&t.db, 8).await;
        tokio::time::timeout(PATIENCE, t.db.close())
            .await
            .expect("closing the database waited on connections kept for reuse");
        t.cleanup().await;
    }
}

/// A clean shutdown closes every SQLite connection before the process ends, so SQLite folds the
/// write-ahead log into the file and removes it and the shared-memory file: what is left on
/// disk is one file that holds everything.
#[tokio::test]
async fn closing_sqlite_leaves_the_database_file_alone_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("haico.db");
    let url = format!("sqlite:{}", path.display());
    let db = Database::connect(&url, &PoolConfig::default())
        .await
        .unwrap();
    write_and_read_at_once(&db, 8).await;
    let side_file = |suffix: &str| dir.path().join(format!("haico.db{suffix}"));
    assert!(
        side_file("-wal").exists(),
        "the writes went through the WAL"
    );
    tokio::time::timeout(PATIENCE, db.close()).await.unwrap();
    for suffix in ["-wal", "-shm"] {
        assert!(
            !side_file(suffix).exists(),
            "haico.db{suffix} is left after closing"
        );
    }
    // The file alone, opened by SQLite itself, holds every write.
    let count: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM threads WHERE id LIKE 't-%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(count, 8);
}

/// `callers` callers at once, each creating thread `t-{i}` and reading it back, so that more
/// than one connection is in use and kept afterwards.
async fn write_and_read_at_once(db: &Database, callers: usize) {
    let calls = (0..callers).map(|i| {
        let db = db.clone();
        async move {
            let mut repo = db.begin_write().await.unwrap();
            repo.threads()
                .create_thread(&tid(&format!("t-{i}")), "x")
                .await
                .unwrap();
            repo.commit().await.unwrap();
            let mut glance = db.autocommit_read().await.unwrap();
            assert!(
                glance
                    .threads()
                    .get_thread(&tid(&format!("t-{i}")))
                    .await
                    .unwrap()
                    .is_some()
            );
            glance.commit().await.unwrap();
        }
    });
    futures::future::join_all(calls).await;
}
