//! A user's lock always wins against the agent path, even when it lands while agent calls are
//! in flight: the agent's writes carry `locked = FALSE` in their SQL, so the database re-checks
//! the lock on the very row it is about to change.

use crate::common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use common::{TestDb, create_thread};
use haico::{
    ThreadId,
    store::{Database, Preference, PreferencePatch, WriteOutcome},
    tools::{ToolRuntime, Toolset, build_tools},
};
use serde_json::{Value, json};
use tokio::task::JoinSet;

const ROUNDS: usize = 32;
const PREFS: usize = 8;
/// Agent calls per agent task per round.
const AGENT_ITERATIONS: usize = 8;
const UPDATERS: usize = 2;
const REMOVERS: usize = 1;

fn lock_patch() -> PreferencePatch {
    PreferencePatch {
        locked: Some(true),
        ..PreferencePatch::default()
    }
}

/// The user path: locks one preference in its own transaction, as `PATCH …/preferences/{id}`
/// does. Returns the row as it was committed, or `None` when the agent had removed it first.
async fn user_lock(db: &Database, thread: &ThreadId, id: i64) -> Option<Preference> {
    let mut repo = db.begin_write().await.unwrap();
    match repo
        .preferences()
        .update_preference(thread, id, &lock_patch(), false)
        .await
        .unwrap()
    {
        (WriteOutcome::Applied, Some(row)) => {
            assert!(row.locked);
            repo.commit().await.unwrap();
            Some(row)
        }
        (WriteOutcome::Missing, None) => {
            repo.rollback().await.unwrap();
            None
        }
        other => panic!("the user path never sees a lock: {other:?}"),
    }
}

async fn read_preferences(db: &Database, thread: &ThreadId) -> Vec<Preference> {
    let mut repo = db.begin_read().await.unwrap();
    let list = repo.preferences().list_preferences(thread).await.unwrap();
    repo.rollback().await.unwrap();
    list
}

/// Runs one agent-path call that must succeed; returns its summary.
async fn agent(runtime: &ToolRuntime, tools: &Toolset, tool: &str, args: Value) -> String {
    let call = runtime.call(tools, tool, args.clone()).await;
    assert!(
        call.envelope.success,
        "{tool}({args}) failed: {:?}",
        call.envelope
    );
    call.envelope.summary.unwrap()
}

fn reports_locked(summary: &str) -> bool {
    summary.contains("locked by the user")
}

#[derive(Default)]
struct Counts {
    agent_calls: AtomicUsize,
    calls_with_locked_skips: AtomicUsize,
    locks_committed: AtomicUsize,
    locks_on_removed: AtomicUsize,
}

backend_tests! {
    async fn user_locks_survive_concurrent_agent_writes(engine) {
        let tdb = TestDb::new(engine).await;
        let db = tdb.db.clone();
        let runtime = ToolRuntime::new(db.clone());
        let counts = Arc::new(Counts::default());

        for round in 0..ROUNDS {
            let thread = create_thread(&db, &format!("race-{round}")).await;
            let tools = Arc::new(build_tools(&thread));
            let items: Vec<Value> = (0..PREFS)
                .map(|k| json!({"title": format!("p{k}"), "subtitle": format!("s{k}"), "kind": if k % 2 == 0 { "hard" } else { "soft" }}))
                .collect();
            agent(&runtime, &tools, "add_preferences", json!({"action_and_reasoning": "Record.", "items": items})).await;
            let initial = read_preferences(&db, &thread).await;
            assert_eq!(initial.len(), PREFS);

            let mut tasks = JoinSet::new();
            for u in 0..UPDATERS {
                let (runtime, tools, counts) = (runtime.clone(), tools.clone(), counts.clone());
                tasks.spawn(async move {
                    for iter in 0..AGENT_ITERATIONS {
                        let updates: Vec<Value> = (1..=PREFS)
                            .map(|index| json!({
                                "index": index,
                                "title": format!("agent-r{round}-u{u}-i{iter}-{index}"),
                                "subtitle": format!("by updater {u}"),
                                "kind": if (iter + index) % 2 == 0 { "soft" } else { "hard" },
                            }))
                            .collect();
                        let summary = agent(&runtime, &tools, "update_preferences", json!({"action_and_reasoning": "Rename.", "updates": updates})).await;
                        counts.agent_calls.fetch_add(1, Ordering::Relaxed);
                        if reports_locked(&summary) {
                            counts.calls_with_locked_skips.fetch_add(1, Ordering::Relaxed);
                        }
                        tokio::task::yield_now().await;
                    }
                });
            }
            for r in 0..REMOVERS {
                let (runtime, tools, counts) = (runtime.clone(), tools.clone(), counts.clone());
                tasks.spawn(async move {
                    for iter in 0..AGENT_ITERATIONS {
                        let index = (iter * 3 + round + r) % PREFS + 1;
                        let summary = agent(&runtime, &tools, "remove_preferences", json!({"action_and_reasoning": "Drop one.", "indices": [index]})).await;
                        counts.agent_calls.fetch_add(1, Ordering::Relaxed);
                        if reports_locked(&summary) {
                            counts.calls_with_locked_skips.fetch_add(1, Ordering::Relaxed);
                        }
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                });
            }
            // The user locks every other preference (a different half and order each round),
            // while the agent tasks run.
            let locker = {
                let (db, thread, counts) = (db.clone(), thread.clone(), counts.clone());
                let order: Vec<i64> = (0..PREFS)
                    .map(|k| (k + round) % PREFS)
                    .filter(|k| (k + round) % 2 == 0)
                    .map(|k| initial[k].id)
                    .collect();
                tokio::spawn(async move {
                    let mut locked = Vec::new();
                    for (n, id) in order.into_iter().enumerate() {
                        tokio::time::sleep(Duration::from_micros(300 * (n as u64 + 1))).await;
                        match user_lock(&db, &thread, id).await {
                            Some(row) => {
                                counts.locks_committed.fetch_add(1, Ordering::Relaxed);
                                locked.push(row);
                            }
                            None => {
                                counts.locks_on_removed.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    locked
                })
            };
            let locked = locker.await.unwrap();
            while let Some(done) = tasks.join_next().await {
                done.expect("agent task");
            }

            // One more agent pass over everything, after every lock has committed.
            let updates: Vec<Value> = (1..=PREFS).map(|index| json!({"index": index, "title": "final", "kind": "soft"})).collect();
            let summary = agent(&runtime, &tools, "update_preferences", json!({"action_and_reasoning": "Rename all.", "updates": updates})).await;
            if !locked.is_empty() {
                assert!(reports_locked(&summary), "{summary}");
            }
            let indices: Vec<usize> = (1..=PREFS).collect();
            let summary = agent(&runtime, &tools, "remove_preferences", json!({"action_and_reasoning": "Drop all.", "indices": indices})).await;
            if !locked.is_empty() {
                assert!(reports_locked(&summary), "{summary}");
            }

            // Every lock held: the locked rows are exactly as they were when the lock committed,
            // and they are all that is left.
            let now = read_preferences(&db, &thread).await;
            for row in &locked {
                let current = now
                    .iter()
                    .find(|p| p.id == row.id)
                    .unwrap_or_else(|| panic!("round {round}: locked preference {} was removed", row.id));
                assert_eq!(current, row, "round {round}: locked preference changed after its lock");
            }
            assert_eq!(now.len(), locked.len(), "round {round}: {now:?}");
        }

        let calls = counts.agent_calls.load(Ordering::Relaxed);
        let skips = counts.calls_with_locked_skips.load(Ordering::Relaxed);
        let locks = counts.locks_committed.load(Ordering::Relaxed);
        let late = counts.locks_on_removed.load(Ordering::Relaxed);
        println!(
            "[{engine:?}] {ROUNDS} rounds: {calls} racing agent calls, {skips} reported locked \
             skips; {locks} locks committed, {late} lock attempts found the preference removed"
        );
        assert!(locks > 0, "no lock was ever taken");
        assert!(skips > 0, "no agent call ever ran into a lock: the race did not happen");
        tdb.cleanup().await;
    }
}

// SQLite serialises every writer through its one writer connection (`BEGIN IMMEDIATE`), so a
// user transaction cannot start while an agent transaction is open and these interleavings
// cannot occur there. On PostgreSQL they can, and the lock must still win.
mod postgres_only {
    use super::*;
    use common::Engine;

    struct Setup {
        tdb: TestDb,
        thread: ThreadId,
        original: Preference,
    }

    async fn setup() -> Setup {
        let tdb = TestDb::new(Engine::Postgres).await;
        let thread = create_thread(&tdb.db, "mid").await;
        let runtime = ToolRuntime::new(tdb.db.clone());
        agent(
            &runtime,
            &build_tools(&thread),
            "add_preferences",
            json!({"action_and_reasoning": "Record.", "items": [{"title": "Budget", "subtitle": "2k", "kind": "hard"}]}),
        )
        .await;
        let original = read_preferences(&tdb.db, &thread).await.remove(0);
        assert!(!original.locked);
        Setup {
            tdb,
            thread,
            original,
        }
    }

    fn agent_patch() -> PreferencePatch {
        PreferencePatch {
            title: Some("agent title".to_string()),
            subtitle: Some(None),
            kind: Some(haico::panels::PreferenceKind::Soft),
            locked: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lock_committed_mid_agent_transaction_wins() {
        needs!(postgres);
        let Setup {
            tdb,
            thread,
            original,
        } = setup().await;
        let t = &thread;
        let id = original.id;

        // Agent transaction A takes the thread lock and reads the list: unlocked.
        let mut a = tdb.db.begin_write().await.unwrap();
        assert_eq!(a.threads().lock_thread(t).await.unwrap(), Some(0));
        let seen = a.preferences().list_preferences(t).await.unwrap();
        assert_eq!(seen, vec![original.clone()]);

        // User transaction B locks and commits meanwhile; it must not wait for A (the user path
        // does not take the thread row lock).
        let locked = tokio::time::timeout(Duration::from_secs(5), user_lock(&tdb.db, t, id))
            .await
            .expect("the user's lock must not wait for the agent's transaction")
            .expect("the preference exists");
        assert!(locked.locked);
        assert_eq!(
            (&locked.title, &locked.subtitle, locked.kind),
            (&original.title, &original.subtitle, original.kind)
        );

        // A now writes from its stale view: the database refuses both writes.
        assert_eq!(
            a.preferences()
                .update_preference(t, id, &agent_patch(), true)
                .await
                .unwrap(),
            (WriteOutcome::Locked, None)
        );
        assert_eq!(
            a.preferences()
                .delete_preference(t, id, true)
                .await
                .unwrap(),
            WriteOutcome::Locked
        );
        a.commit().await.unwrap();

        assert_eq!(read_preferences(&tdb.db, t).await, vec![locked]);
        tdb.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn agent_write_waits_for_an_uncommitted_lock_then_skips() {
        needs!(postgres);
        let Setup {
            tdb,
            thread,
            original,
        } = setup().await;
        let t = thread.clone();
        let id = original.id;

        let mut a = tdb.db.begin_write().await.unwrap();
        a.threads().lock_thread(&t).await.unwrap();
        assert!(!a.preferences().list_preferences(&t).await.unwrap()[0].locked);

        // B locks the row but has not committed yet.
        let mut b = tdb.db.begin_write().await.unwrap();
        let (outcome, row) = b
            .preferences()
            .update_preference(&t, id, &lock_patch(), false)
            .await
            .unwrap();
        assert_eq!(outcome, WriteOutcome::Applied);
        let locked = row.unwrap();

        // A's lock-respecting write has to wait for B…
        let thread_a = t.clone();
        let pending = tokio::spawn(async move {
            let result = a
                .preferences()
                .update_preference(&thread_a, id, &agent_patch(), true)
                .await
                .unwrap();
            (a, result)
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !pending.is_finished(),
            "the agent's write should wait on the user's row lock"
        );

        // …and once B commits, it sees the lock and changes nothing.
        b.commit().await.unwrap();
        let (mut a, result) = tokio::time::timeout(Duration::from_secs(10), pending)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(result, (WriteOutcome::Locked, None));
        assert_eq!(
            a.preferences()
                .delete_preference(&t, id, true)
                .await
                .unwrap(),
            WriteOutcome::Locked
        );
        a.commit().await.unwrap();

        assert_eq!(read_preferences(&tdb.db, &t).await, vec![locked]);
        tdb.cleanup().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn agent_write_applies_when_the_user_lock_rolls_back() {
        needs!(postgres);
        let Setup {
            tdb,
            thread,
            original,
        } = setup().await;
        let t = thread.clone();
        let id = original.id;

        let mut a = tdb.db.begin_write().await.unwrap();
        a.threads().lock_thread(&t).await.unwrap();
        let mut b = tdb.db.begin_write().await.unwrap();
        b.preferences()
            .update_preference(&t, id, &lock_patch(), false)
            .await
            .unwrap();

        let thread_a = t.clone();
        let pending = tokio::spawn(async move {
            let result = a
                .preferences()
                .update_preference(&thread_a, id, &agent_patch(), true)
                .await
                .unwrap();
            (a, result)
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !pending.is_finished(),
            "the agent's write should wait on the user's row lock"
        );
        b.rollback().await.unwrap();

        let (a, (outcome, row)) = tokio::time::timeout(Duration::from_secs(10), pending)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(outcome, WriteOutcome::Applied);
        let row = row.unwrap();
        assert_eq!(
            (row.title.as_str(), row.subtitle.as_deref(), row.locked),
            ("agent title", None, false)
        );
        a.commit().await.unwrap();
        assert_eq!(read_preferences(&tdb.db, &t).await, vec![row]);
        tdb.cleanup().await;
    }
}
