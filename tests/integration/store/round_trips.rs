//! Round trips to PostgreSQL per tool call, counted by the lender (`Lender::round_trips`).
//!
//! On PostgreSQL most of haico's CPU per call is spent talking to the server, once per round
//! trip (PERFORMANCE §21), so the number of round trips each kind of call makes is pinned
//! here: a change that adds one fails this test, on a busy machine as on a quiet one, where a
//! timing would only drift. Each call runs once to warm up first (sqlx prepares a statement on
//! its first use on a connection, one more round trip that later calls do not pay).

use haico::store::{
    Database,
    lender::{Lender, Lent, Named},
};
use serde_json::{Value, json};
use sqlx::Row;

use crate::common::{Engine, Harness, TestDb};

/// The round trips one call of `tool` makes, after one call of the same to warm up.
async fn round_trips(h: &Harness, tool: &str, args: &Value) -> u64 {
    let Database::Postgres { lender, .. } = h.db() else {
        panic!("round trips are counted on PostgreSQL only");
    };
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
        // Writes: `BEGIN` with the thread's lock (one trip, was 2), the tool's statements, the
        // change log (one), `COMMIT` (one). Whole-state writes first.
        (
            "set_objective",
            json!({"objective": "A calm week by the sea"}),
            4,
        ),
        (
            "update_document",
            json!({"title": "Trip", "content": "# Trip\n\nBy train."}),
            6,
        ),
        // Writes recorded as operations.
        (
            "append_to_document",
            json!({"text": "\n- Keep the budget in view."}),
            5,
        ),
        (
            "add_todos",
            json!({"steps": [{"text": "Book the train", "depth": 0}]}),
            6,
        ),
        ("toggle_todos", json!({"indices": [1]}), 4),
        (
            "update_todos",
            json!({"updates": [{"index": 1, "text": "Book the night train"}]}),
            4,
        ),
        (
            "add_preferences",
            json!({"items": [{"title": "Trains", "kind": "soft"}]}),
            4,
        ),
        (
            "update_preferences",
            json!({"updates": [{"index": 1, "subtitle": "said twice"}]}),
            5,
        ),
        // A write that also stores an artifact.
        (
            "chart_generator",
            json!({
                "chart_type": "bar",
                "title": "Costs",
                "data": {"labels": ["Train"], "series": [{"name": "EUR", "values": [120]}]},
            }),
            5,
        ),
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

/// A statement for [`Lent::begin_with`] that needs no table.
const ECHO: Named = Named {
    name: "haico_test_echo",
    definition: "SELECT length($1::text)::bigint",
};

/// `Lent::begin_with` prepares its statement once per connection and recovers, with one more
/// try, when the connection already holds it (it left the lender and came back) or lost it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn begin_with_prepares_once_and_recovers() {
    if !crate::common::needs::postgres() {
        return;
    }
    let test_db = TestDb::new(Engine::Postgres).await;
    let Database::Postgres { pool, .. } = &test_db.db else {
        unreachable!("a PostgreSQL test database");
    };
    // A lender of its own: its shelf hands the one connection given back to the next lend.
    let lender = Lender::new(pool.clone());
    let echo = async |lent: &mut Lent| -> Result<i64, sqlx::Error> {
        let row = lent.begin_with("BEGIN", &ECHO, "abc").await?;
        row.expect("one row").try_get::<i64, _>(0)
    };

    // First use: `PREPARE`, `BEGIN` and `EXECUTE` in one round trip; later uses skip `PREPARE`.
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 1);
    lent.rollback().await.unwrap();
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 1);

    // Lost (deallocated behind the lender's back): `26000` inside the transaction, which is
    // rolled back, then prepared again.
    lent.commit().await.unwrap();
    let mut lent = lender.lend().await.unwrap();
    lent.execute(sqlx::query("DEALLOCATE haico_test_echo"))
        .await
        .unwrap();
    let before = lender.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(lender.round_trips() - before, 3, "try, ROLLBACK, try again");
    lent.commit().await.unwrap();

    // Already there on a connection the lender has not seen prepare it: `42P05` before
    // anything ran, then `BEGIN; EXECUTE` alone.
    let fresh = Lender::new(pool.clone());
    let mut lent = fresh.lend().await.unwrap();
    lent.execute(sqlx::query(
        "PREPARE haico_test_echo AS SELECT length($1::text)::bigint",
    ))
    .await
    .unwrap();
    let before = fresh.round_trips();
    assert_eq!(echo(&mut lent).await.unwrap(), 3);
    assert_eq!(
        fresh.round_trips() - before,
        2,
        "PREPARE refused, then BEGIN; EXECUTE"
    );
    lent.commit().await.unwrap();

    // An argument that would need quoting is refused before anything is sent.
    let mut lent = lender.lend().await.unwrap();
    let before = lender.round_trips();
    assert!(
        lent.begin_with("BEGIN", &ECHO, "x'); DROP TABLE threads; --")
            .await
            .is_err()
    );
    assert_eq!(lender.round_trips(), before);
    drop(lent);
    drop((lender, fresh));
    test_db.cleanup().await;
}
