#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;

async fn writer(dir: &tempfile::TempDir) -> Writer {
    grouped(dir, 1).await
}

fn url(dir: &tempfile::TempDir) -> String {
    format!("sqlite:{}", dir.path().join("w.db").display())
}

async fn grouped(dir: &tempfile::TempDir, group: usize) -> Writer {
    let options = SqliteOptions::parse(&url(dir))
        .unwrap()
        .create_if_missing(true);
    let writer = Writer::open(
        &options,
        Duration::from_secs(5),
        Duration::from_secs(5),
        group,
    )
    .await
    .unwrap();
    let held = writer.begin().await.unwrap();
    held.inline()
        .unwrap()
        .execute_batch("CREATE TABLE t (v INTEGER)")
        .unwrap();
    held.commit().await.unwrap();
    writer
}

async fn count(writer: &Writer) -> i64 {
    let held = writer.begin().await.unwrap();
    let seen = held
        .inline()
        .unwrap()
        .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
        .unwrap();
    held.rollback().await.unwrap();
    seen
}

fn insert(held: &Held, v: i64) {
    held.inline()
        .unwrap()
        .execute("INSERT INTO t VALUES (?1)", [v])
        .unwrap();
}

#[tokio::test]
async fn an_abandoned_transaction_is_rolled_back_and_the_next_one_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    let held = writer.begin().await.unwrap();
    insert(&held, 1);
    drop(held);
    assert_eq!(count(&writer).await, 0);
    let held = writer.begin().await.unwrap();
    insert(&held, 2);
    held.commit().await.unwrap();
    assert_eq!(count(&writer).await, 1);
}

#[tokio::test]
async fn a_begin_abandoned_half_way_never_leaves_a_transaction_behind() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    for round in 0..40 {
        // Dropped at its first wait: sometimes before `BEGIN` is sent, sometimes after.
        tokio::select! {
            biased;
            _ = tokio::task::yield_now() => {}
            _ = writer.begin() => {}
        }
        let held = writer.begin().await.unwrap();
        insert(&held, round);
        held.commit().await.unwrap();
    }
    assert_eq!(count(&writer).await, 40);
}

#[tokio::test]
async fn writers_take_turns_and_a_closed_writer_refuses_new_work() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let writer = writer.clone();
        tasks.push(tokio::spawn(async move {
            let held = writer.begin().await.unwrap();
            insert(&held, i);
            held.commit().await.unwrap();
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(count(&writer).await, 8);
    writer.close().await;
    assert!(matches!(writer.begin().await, Err(SqliteError::Closed)));
    assert!(matches!(
        writer.with_connection(|_| ()).await,
        Err(SqliteError::Closed)
    ));
    // Closing again finds nothing to settle and nothing to close.
    writer.close().await;
    assert!(matches!(writer.begin().await, Err(SqliteError::Closed)));
}

#[tokio::test]
async fn statements_of_one_call_share_its_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    let held = writer.begin().await.unwrap();
    for round in 0..3 {
        // A write, then a read on the same connection: each sees the others.
        insert(&held, round);
        let seen: i64 = held
            .inline()
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(seen, round + 1);
    }
    let seen: i64 = held
        .inline()
        .unwrap()
        .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
        .unwrap();
    assert_eq!(seen, 3);
    held.rollback().await.unwrap();
    assert_eq!(count(&writer).await, 0);
}

#[tokio::test]
async fn work_on_the_bare_connection_runs_between_calls() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    let tables = writer
        .with_connection(|conn| {
            conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |row| {
                row.get::<_, i64>(0)
            })
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(tables, 1);
    let held = writer.begin().await.unwrap();
    insert(&held, 1);
    held.commit().await.unwrap();
    assert_eq!(count(&writer).await, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn waiting_for_another_process_s_lock_never_blocks_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let writer = writer(&dir).await;
    let other = rusqlite::Connection::open(dir.path().join("w.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    other.execute_batch("INSERT INTO t VALUES (7)").unwrap();
    let ticks = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let waiting = tokio::spawn({
        let writer = writer.clone();
        async move {
            let held = writer.begin().await.unwrap();
            insert(&held, 8);
            held.commit().await.unwrap();
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // On this one-thread runtime the ticker only ran if the waiting begin let it.
    assert!(ticks.load(std::sync::atomic::Ordering::Relaxed) >= 10);
    assert!(!waiting.is_finished());
    other.execute_batch("COMMIT").unwrap();
    waiting.await.unwrap();
    ticker.abort();
    assert_eq!(count(&writer).await, 2);
}

/// Rows another connection sees: only what was committed.
fn committed(dir: &tempfile::TempDir) -> Vec<i64> {
    let other = rusqlite::Connection::open(dir.path().join("w.db")).unwrap();
    let mut statement = other.prepare("SELECT v FROM t ORDER BY v").unwrap();
    statement
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

async fn until_queued(writer: &Writer, n: usize) {
    while writer.queued.load(Ordering::Acquire) < n {
        tokio::task::yield_now().await;
    }
}

/// A first call that wrote 1 and is committing while a second call is queued behind it:
/// the first's commit and the second's begin, each running as a task of its own.
async fn committing_with_one_queued(
    writer: &Writer,
) -> (
    tokio::task::JoinHandle<Result<(), SqliteError>>,
    tokio::task::JoinHandle<Result<Held, SqliteError>>,
) {
    let first = writer.begin().await.unwrap();
    insert(&first, 1);
    let second = tokio::spawn({
        let writer = writer.clone();
        async move { writer.begin().await }
    });
    until_queued(writer, 1).await;
    (tokio::spawn(first.commit()), second)
}

#[tokio::test]
async fn a_call_with_others_queued_is_answered_only_when_their_shared_commit_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let writer = grouped(&dir, 8).await;
    let (first_commit, second) = committing_with_one_queued(&writer).await;
    let second = second.await.unwrap().unwrap();
    // The second call runs in the transaction the first left open: its row is there for
    // it, and nobody else sees either row yet, so the first has not been answered.
    let seen: i64 = second
        .inline()
        .unwrap()
        .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
        .unwrap();
    assert_eq!(seen, 1);
    assert!(committed(&dir).is_empty());
    assert!(!first_commit.is_finished());
    insert(&second, 2);
    second.commit().await.unwrap();
    first_commit.await.unwrap().unwrap();
    assert_eq!(committed(&dir), vec![1, 2]);
}

#[tokio::test]
async fn a_failed_call_rolls_back_alone_and_its_neighbours_commit() {
    let dir = tempfile::tempdir().unwrap();
    let writer = grouped(&dir, 16).await;
    let mut tasks = Vec::new();
    for v in 0..24_i64 {
        let writer = writer.clone();
        tasks.push(tokio::spawn(async move {
            let held = writer.begin().await.unwrap();
            insert(&held, v);
            if v % 3 == 0 {
                held.rollback().await.unwrap();
            } else if v % 3 == 1 {
                // Abandoned mid-call: dropped, as a cancelled request is.
                drop(held);
            } else {
                held.commit().await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    // Let the clean-up an abandoned last call spawns run.
    let _ = writer.begin().await.unwrap().rollback().await;
    let expected: Vec<i64> = (0..24).filter(|v| v % 3 == 2).collect();
    assert_eq!(committed(&dir), expected);
}

#[tokio::test]
async fn calls_waiting_for_a_commit_get_it_when_the_queue_gives_up() {
    let dir = tempfile::tempdir().unwrap();
    let writer = grouped(&dir, 8).await;
    let (first_commit, gives_up) = committing_with_one_queued(&writer).await;
    // The call behind it never takes the connection: its request is cancelled.
    tokio::task::yield_now().await;
    gives_up.abort();
    // (Had it taken the connection before the abort, dropping it gives the call up.)
    drop(gives_up);
    let answered = tokio::time::timeout(Duration::from_secs(5), first_commit).await;
    answered.unwrap().unwrap().unwrap();
    assert_eq!(committed(&dir), vec![1]);
}

#[tokio::test]
async fn closing_commits_the_calls_waiting_for_a_commit() {
    let dir = tempfile::tempdir().unwrap();
    let writer = grouped(&dir, 8).await;
    let (first_commit, second) = committing_with_one_queued(&writer).await;
    drop(second.await.unwrap().unwrap());
    writer.close().await;
    first_commit.await.unwrap().unwrap();
    assert_eq!(committed(&dir), vec![1]);
}

#[tokio::test]
async fn a_failed_shared_commit_reaches_every_call_as_sqlite_s_own_error() {
    let failure = group::Failure::Commit {
        code: rusqlite::ffi::SQLITE_IOERR_WRITE,
        message: "disk I/O error".to_string(),
    };
    match failure.into_error() {
        SqliteError::Sqlite(rusqlite::Error::SqliteFailure(code, Some(text))) => {
            assert_eq!(code.code, rusqlite::ErrorCode::SystemIoFailure);
            assert_eq!(code.extended_code, rusqlite::ffi::SQLITE_IOERR_WRITE);
            assert_eq!(text, "disk I/O error");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        group::Failure::Vanished.into_error(),
        SqliteError::SharedRollback
    ));
}
