//! Round trips to PostgreSQL per tool call, counted by the lender (`Lender::round_trips`).
//!
//! On PostgreSQL most of haico's CPU per call is spent talking to the server, once per round
//! trip, so the number of round trips each kind of call makes is pinned
//! here: a change that adds one fails this test, on a busy machine as on a quiet one, where a
//! timing would only drift. Each call runs once to warm up first (sqlx prepares a statement on
//! its first use on a connection, one more round trip that later calls do not pay).

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicUsize, Ordering},
};

use haico::people::{Op, People, PeopleBell, Principal, Refusal, ToolUse};
use haico::store::Database;
use serde_json::{Value, json};

use haico::workspace::{DocumentMode, SuggestionStatus, ThreadChange, Workspaces};

use crate::common::{Engine, Harness};

/// Counts a PostgreSQL harness's round trips.
struct Trips<'a>(&'a Database);

impl Trips<'_> {
    fn round_trips(&self) -> u64 {
        self.0
            .round_trips()
            .expect("round trips are counted on PostgreSQL only")
    }
}

fn lender_of(h: &Harness) -> Trips<'_> {
    Trips(h.db())
}
/// The round trips one call of `tool` makes, after one call of the same to warm up.
async fn round_trips(h: &Harness, tool: &str, args: &Value) -> u64 {
    let lender = lender_of(h);
    let warm_up = h.call(tool, args.clone()).await;
    assert!(warm_up.success, "{tool}({args}) failed: {warm_up:?}");
    let before = lender.round_trips();
    let call = h.call(tool, args.clone()).await;
    let after = lender.round_trips();
    assert!(call.success, "{tool}({args}) failed: {call:?}");
    after - before
}

fn with_reason(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Counting round trips.");
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_tool_class_on_postgres() {
    if !crate::common::needs::postgres() {
        return;
    }
    let h = Harness::new(Engine::Postgres).await;
    let artifact = h
        .call_full(
            "chart_generator",
            with_reason(json!({
                "chart_type": "bar",
                "title": "Costs",
                "data": {"labels": ["Train", "Hotel"], "series": [{"name": "EUR", "values": [120, 400]}]},
            })),
        )
        .await;
    let artifact_id = artifact.envelope.artifact_id.expect("a chart is stored");
    let cases: Vec<(&str, Value, u64)> = vec![
        // Read-only tools: one statement checks the thread and reads the panel (was 2).
        ("list_todos", json!({}), 1),
        ("list_preferences", json!({}), 1),
        ("list_artifacts", json!({"limit": 10}), 1),
        ("get_artifact", json!({"artifact_id": artifact_id}), 1),
        // Writes: `BEGIN`, the thread's lock and the tool's first statement in one trip
        // (`Lent::begin_with_then`), the tool's other statements, then the change log and
        // `COMMIT` in one trip. Whole-state writes first.
        (
            "set_objective",
            json!({"objective": "A calm week by the sea"}),
            2,
        ),
        // The document tools write on the guess that the thread is in direct mode, which the
        // lock's answer confirms in the same trip (`DocumentEdit::write_or_suggest`).
        // `update_document` reads the body it replaces in the statement that replaces it.
        (
            "update_document",
            json!({"title": "Trip", "content": "# Trip\n\nBy train."}),
            2,
        ),
        // Writes recorded as operations.
        (
            "append_to_document",
            json!({"text": "\n- Keep the budget in view."}),
            2,
        ),
        (
            "add_todos",
            json!({"steps": [{"text": "Book the train", "depth": 0}]}),
            // Reading the plan's end and inserting are one statement (was 3).
            2,
        ),
        ("toggle_todos", json!({"indices": [1]}), 2),
        (
            "update_todos",
            json!({"updates": [{"index": 1, "text": "Book the night train"}]}),
            2,
        ),
        (
            "add_preferences",
            json!({"items": [{"title": "Trains", "kind": "soft"}]}),
            2,
        ),
        (
            "update_preferences",
            json!({"updates": [{"index": 1, "subtitle": "said twice"}]}),
            3,
        ),
        // A write that stores an artifact: its row takes the turn from the locked thread row,
        // so it rides with the lock, and the log tags it with the revision (was 5).
        (
            "chart_generator",
            json!({
                "chart_type": "bar",
                "title": "Costs",
                "data": {"labels": ["Train"], "series": [{"name": "EUR", "values": [120]}]},
            }),
            2,
        ),
        // Less frequent shapes. Nesting under a step reads the plan's length, the parent, its
        // sub-steps and the key before the gap in one statement (was 7: four reads in a row);
        // a removal reads the length and every target's run of sub-steps in one (was 5).
        (
            "add_todos",
            json!({"steps": [{"text": "Seat by the window", "depth": 0}], "parent_index": 1}),
            3,
        ),
        ("remove_todos", json!({"indices": [2]}), 3),
        ("remove_preferences", json!({"indices": [1]}), 3),
    ];
    let mut measured = Vec::new();
    for (tool, args, _) in &cases {
        measured.push(round_trips(&h, tool, &with_reason(args.clone())).await);
    }
    let expected: Vec<u64> = cases.iter().map(|(_, _, n)| *n).collect();
    let names: Vec<&str> = cases.iter().map(|(tool, _, _)| *tool).collect();
    assert_eq!(
        names.iter().zip(&measured).collect::<Vec<_>>(),
        names.iter().zip(&expected).collect::<Vec<_>>(),
        "round trips per call (tool, count)"
    );
    h.cleanup().await;
}

/// A document tool writes before the lock has said the thread's mode; in suggest mode it
/// starts over (one round trip: `ROLLBACK; BEGIN` and the lock) and stores a suggestion, and
/// the document is exactly as it was: nothing of the guessed write stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_tool_in_suggest_mode_starts_over() {
    if !crate::common::needs::postgres() {
        return;
    }
    let h = Harness::new(Engine::Postgres).await;
    h.ok(
        "update_document",
        with_reason(json!({"content": "# Trip\n\nBy train."})),
    )
    .await;
    let before = h.workspace().await.document.expect("a document");
    let workspaces = Workspaces::standalone(h.db().clone());
    workspaces
        .threads()
        .change(
            &h.thread,
            ThreadChange {
                document_mode: Some(DocumentMode::Suggest),
                ..ThreadChange::default()
            },
        )
        .await
        .unwrap();

    let lender = lender_of(&h);
    let append = |text: &str| with_reason(json!({ "text": text }));
    // The first prepares what the connection does not hold yet; the second is counted: the
    // guessed append with the lock, the start over, the suggestion's two reads (the document,
    // the open suggestions) and its insert, then the change log and `COMMIT`. One more than
    // asking the mode first would take, in the mode that is not the default.
    for (text, trips) in [("\n- And back by bus.", None), ("\n- Or by boat.", Some(6))] {
        let before = lender.round_trips();
        let call = h.call("append_to_document", append(text)).await;
        let counted = lender.round_trips() - before;
        assert!(
            call.summary
                .as_deref()
                .is_some_and(|s| s.starts_with("suggested #")),
            "{call:?}"
        );
        if let Some(trips) = trips {
            assert_eq!(counted, trips);
        }
    }
    let after = h.workspace().await.document.expect("a document");
    assert_eq!(
        (after.content, after.version),
        (before.content, before.version)
    );
    let mut view = workspaces.view(&h.thread).await.unwrap();
    let open = view
        .suggestions(Some(SuggestionStatus::Open))
        .await
        .unwrap();
    view.close().await;
    assert_eq!(open.len(), 2);
    h.cleanup().await;
}

/// A signed-in person's request reads who they are and what they may do with the thread
/// before anything else: one round trip each, outside a transaction (a snapshot would add
/// `BEGIN` and `ROLLBACK` to both, six trips before a two-trip tool call), whatever the
/// answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_persons_checks_are_one_trip_each() {
    if !crate::common::needs::postgres() {
        return;
    }
    let h = Harness::new(Engine::Postgres).await;
    let lender = lender_of(&h);
    let people = People::new(h.db().clone());
    people.create_user("boss", true, None).await.unwrap();
    let (_, editor_token) = people.create_user("ed", false, None).await.unwrap();
    let (_, viewer_token) = people.create_user("vi", false, None).await.unwrap();
    people.share(&h.thread, "ed", "editor").await.unwrap();
    people.share(&h.thread, "vi", "viewer").await.unwrap();
    let write = Op::CallTool(ToolUse::Writes);

    for (token, expected) in [
        (&editor_token, Ok(())),
        (&viewer_token, Err(Refusal::ReadOnly)),
    ] {
        // Warm up: sqlx prepares each statement once per connection.
        let user = people.user_by_token(token).await.unwrap().unwrap();
        let principal = Principal::User(user);
        people
            .may(&principal, Some(&h.thread), write)
            .await
            .unwrap()
            .unwrap_or(());

        let before = lender.round_trips();
        let user = people
            .user_by_token(token)
            .await
            .unwrap()
            .expect("the token's account");
        assert_eq!(
            lender.round_trips() - before,
            1,
            "identifying {}",
            user.name
        );
        let before = lender.round_trips();
        let answer = people
            .may(&Principal::User(user.clone()), Some(&h.thread), write)
            .await
            .unwrap();
        assert_eq!(lender.round_trips() - before, 1, "{}'s access", user.name);
        assert_eq!(answer, expected, "{}", user.name);
    }
    h.cleanup().await;
}

/// A bell for [`People::remember_with`] whose hearing the test turns on and off, and which
/// counts what it announced.
#[derive(Debug, Default)]
struct TestBell {
    hears: AtomicBool,
    announced: AtomicUsize,
}

impl PeopleBell for TestBell {
    fn hears_changes(&self) -> bool {
        self.hears.load(Ordering::SeqCst)
    }

    fn announce_change(&self) {
        self.announced.fetch_add(1, Ordering::SeqCst);
    }
}

/// With a bell that hears other processes' changes, a signed-in person's checks cost no round
/// trip once answered; a change made here is answered fresh at once and announced; while the
/// bell does not hear, every check reads again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remembered_checks_cost_nothing_until_something_changes() {
    if !crate::common::needs::postgres() {
        return;
    }
    let h = Harness::new(Engine::Postgres).await;
    let lender = lender_of(&h);
    let people = People::new(h.db().clone());
    let bell = Arc::new(TestBell::default());
    bell.hears.store(true, Ordering::SeqCst);
    people.remember_with(bell.clone());
    people.create_user("boss", true, None).await.unwrap();
    let (_, token) = people.create_user("ed", false, None).await.unwrap();
    people.share(&h.thread, "ed", "editor").await.unwrap();
    let write = Op::CallTool(ToolUse::Writes);
    let check = async || {
        let before = lender.round_trips();
        let user = people.user_by_token(&token).await.unwrap().expect("ed");
        let answer = people
            .may(&Principal::User(user), Some(&h.thread), write)
            .await
            .unwrap();
        (answer, lender.round_trips() - before)
    };

    assert_eq!(check().await, (Ok(()), 2), "the first check reads");
    assert_eq!(check().await, (Ok(()), 0), "then it is remembered");
    let announced = bell.announced.load(Ordering::SeqCst);
    people.share(&h.thread, "ed", "viewer").await.unwrap();
    assert_eq!(bell.announced.load(Ordering::SeqCst), announced + 1);
    assert_eq!(
        check().await,
        (Err(Refusal::ReadOnly), 2),
        "a change here: read afresh"
    );
    assert_eq!(check().await, (Err(Refusal::ReadOnly), 0));
    people.changed_elsewhere();
    assert_eq!(
        check().await,
        (Err(Refusal::ReadOnly), 2),
        "rung by another replica"
    );

    // The bell went deaf (the LISTEN connection is down): nothing remembered is trusted.
    bell.hears.store(false, Ordering::SeqCst);
    assert_eq!(check().await, (Err(Refusal::ReadOnly), 2));
    assert_eq!(check().await, (Err(Refusal::ReadOnly), 2));
    bell.hears.store(true, Ordering::SeqCst);

    // A removed account's token is unknown at once.
    assert_eq!(check().await.1, 2);
    people.remove_user("ed").await.unwrap();
    assert_eq!(people.user_by_token(&token).await.unwrap(), None);
    h.cleanup().await;
}

/// An agent write whose first statement has a parameter no literal can carry (a NUL, which
/// the tools refuse before they write; the store must still not send it inline) takes the
/// lock alone, then binds the statement as every other: PostgreSQL refuses the NUL as it always
/// has, and the thread's row is known from the lock. On a missing thread the first statement
/// fails whatever it is, and the head says there is no thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_statement_that_cannot_ride_takes_the_lock_alone() {
    if !crate::common::needs::postgres() {
        return;
    }
    let h = Harness::new(Engine::Postgres).await;
    let lender = lender_of(&h);
    let mut repo = h.db().begin_agent_write(&h.thread).await.unwrap();
    let before = lender.round_trips();
    let refused = repo.objectives().set_objective(&h.thread, "a\0b").await;
    assert!(refused.is_err(), "PostgreSQL text cannot hold a NUL");
    assert_eq!(
        lender.round_trips() - before,
        2,
        "the lock alone, then the statement"
    );
    let head = repo
        .thread_head()
        .await
        .unwrap()
        .expect("the thread exists");
    assert_eq!(head.document_mode, haico::store::DocumentMode::Direct);
    repo.rollback().await.unwrap();

    let ghost = haico::ThreadId::parse("ghost").unwrap();
    let mut repo = h.db().begin_agent_write(&ghost).await.unwrap();
    let before = lender.round_trips();
    let missing = repo.objectives().set_objective(&ghost, "Haunt").await;
    assert!(missing.is_err());
    assert_eq!(
        lender.round_trips() - before,
        1,
        "the lock and the statement together"
    );
    assert!(repo.thread_head().await.unwrap().is_none());
    repo.rollback().await.unwrap();
    h.cleanup().await;
}
