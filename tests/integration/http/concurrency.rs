//! Many clients writing through the HTTP tools endpoint at once: no lost update, no duplicate
//! position, no write landing on the wrong thread. Real server, default pool, both engines.

use crate::common;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

use common::{Engine, TestDb, server::TestServer};
use haico::store::Database;
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// Concurrent clients per test.
const CLIENTS: usize = 32;
/// Tool calls per single-thread test.
const CALLS: usize = 1_000;

/// The 10-character marker of call `i`: `[0001....]`.
fn marker(i: usize) -> String {
    let m = format!("[{i:04}....]");
    assert_eq!(m.chars().count(), 10);
    m
}

/// Runs `CALLS` calls spread over `CLIENTS` tasks; `call(i)` makes call number `i` and returns
/// its envelope. Returns the envelopes by call number.
async fn hammer<F, Fut>(call: F) -> Vec<Value>
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Value> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = JoinSet::new();
    for _ in 0..CLIENTS {
        let next = next.clone();
        let call = call.clone();
        tasks.spawn(async move {
            let mut mine = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= CALLS {
                    break;
                }
                mine.push((i, call(i).await));
            }
            mine
        });
    }
    let mut all: Vec<(usize, Value)> = Vec::with_capacity(CALLS);
    while let Some(done) = tasks.join_next().await {
        all.extend(done.expect("client task"));
    }
    all.sort_by_key(|(i, _)| *i);
    assert_eq!(all.len(), CALLS);
    all.into_iter().map(|(_, env)| env).collect()
}

/// The number in `prefix<n>suffix` inside `summary`.
fn number_after(summary: &str, prefix: &str) -> usize {
    let start = summary
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} not in {summary:?}"))
        + prefix.len();
    summary[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after {prefix:?} in {summary:?}"))
}

/// The stored order keys of a thread's todos as ranks (see [`common::step_ranks`]).
async fn todo_positions(db: &Database, thread: &str) -> Vec<i64> {
    common::step_ranks(db, thread).await
}

/// Parses a `list_todos` outline of top-level steps into (number, text) pairs.
fn parse_plan(plan: &str) -> Vec<(usize, String)> {
    plan.lines()
        .map(|line| {
            let (number, rest) = line
                .split_once(". [ ] ")
                .unwrap_or_else(|| panic!("unexpected plan line {line:?}"));
            (number.parse().unwrap(), rest.to_string())
        })
        .collect()
}

async fn start(engine: Engine) -> (TestDb, Arc<TestServer>) {
    let tdb = TestDb::new(engine).await;
    let server = Arc::new(TestServer::start(&tdb.db).await);
    (tdb, server)
}

async fn stop(tdb: TestDb, server: Arc<TestServer>) {
    let server = Arc::try_unwrap(server).unwrap_or_else(|_| panic!("server still shared"));
    server.shutdown().await;
    tdb.cleanup().await;
}

backend_tests! {
    async fn concurrent_appends_lose_nothing(engine) {
        let (tdb, server) = start(engine).await;
        server.create_thread("doc").await;
        let started = Instant::now();
        let envelopes = {
            let server = server.clone();
            hammer(move |i| {
                let server = server.clone();
                async move {
                    server
                        .tool("doc", "append_to_document", json!({"action_and_reasoning": "Add a line.", "text": marker(i)}))
                        .await
                }
            })
            .await
        };
        let elapsed = started.elapsed();
        println!("[{engine:?}] {CALLS} appends by {CLIENTS} clients: {elapsed:?}");

        // Every call saw a distinct total: the appends ran one after the other.
        let mut totals = Vec::with_capacity(CALLS);
        for env in &envelopes {
            assert_eq!(env["success"], json!(true), "{env}");
            totals.push(number_after(env["summary"].as_str().unwrap(), "appended ("));
        }
        totals.sort_unstable();
        assert_eq!(totals, (1..=CALLS).map(|n| n * 10).collect::<Vec<_>>());

        let ws = server.workspace("doc").await;
        let doc = &ws["document"];
        let content = doc["content"].as_str().unwrap();
        assert_eq!(content.chars().count(), CALLS * 10);
        assert_eq!(doc["version"], json!(CALLS));
        for i in 0..CALLS {
            assert_eq!(content.matches(&marker(i)).count(), 1, "marker {i}");
        }
        // And the body is nothing but whole markers.
        let chunks: BTreeSet<&str> = (0..CALLS).map(|k| &content[k * 10..k * 10 + 10]).collect();
        assert_eq!(chunks.len(), CALLS);
        stop(tdb, server).await;
    }

    async fn concurrent_add_todos_keep_positions_dense(engine) {
        let (tdb, server) = start(engine).await;
        server.create_thread("plan").await;
        let started = Instant::now();
        let envelopes = {
            let server = server.clone();
            hammer(move |i| {
                let server = server.clone();
                async move {
                    server
                        .tool("plan", "add_todos", json!({"action_and_reasoning": "Add a step.", "steps": [{"text": format!("step {i:04}")}]}))
                        .await
                }
            })
            .await
        };
        let elapsed = started.elapsed();
        println!("[{engine:?}] {CALLS} add_todos by {CLIENTS} clients: {elapsed:?}");

        let mut totals = Vec::with_capacity(CALLS);
        for env in &envelopes {
            assert_eq!(env["success"], json!(true), "{env}");
            totals.push(number_after(env["summary"].as_str().unwrap(), "the plan now has "));
        }
        totals.sort_unstable();
        assert_eq!(totals, (1..=CALLS).collect::<Vec<_>>());

        let plan = server.tool_ok("plan", "list_todos", json!({"action_and_reasoning": "Review."})).await;
        let steps = parse_plan(&plan);
        assert_eq!(steps.iter().map(|(n, _)| *n).collect::<Vec<_>>(), (1..=CALLS).collect::<Vec<_>>());
        let texts: BTreeSet<&str> = steps.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, (0..CALLS).map(|i| format!("step {i:04}")).collect::<BTreeSet<_>>().iter().map(String::as_str).collect());

        let positions = todo_positions(&tdb.db, "plan").await;
        assert_eq!(positions, (0..i64::try_from(CALLS).unwrap()).collect::<Vec<_>>());
        let ws = server.workspace("plan").await;
        assert_eq!(ws["todos"].as_array().unwrap().len(), CALLS);
        stop(tdb, server).await;
    }

    async fn concurrent_mixed_writes_over_eight_threads(engine) {
        const THREADS: usize = 8;
        const OPS: usize = 24;
        let (tdb, server) = start(engine).await;
        for t in 0..THREADS {
            server.create_thread(&format!("mix-{t}")).await;
        }
        let started = Instant::now();
        let mut tasks = JoinSet::new();
        for client in 0..CLIENTS {
            let server = server.clone();
            tasks.spawn(async move {
                let thread = format!("mix-{}", client % THREADS);
                for j in 0..OPS {
                    let tag = format!("<{client:02}-{j:03}..>");
                    match j % 4 {
                        0 => {
                            server.tool_ok(&thread, "append_to_document", json!({"action_and_reasoning": "Add.", "text": tag})).await;
                        }
                        1 => {
                            server.tool_ok(&thread, "add_todos", json!({"action_and_reasoning": "Plan.", "steps": [{"text": tag}]})).await;
                        }
                        2 if j % 8 == 2 => {
                            server.tool_ok(&thread, "add_preferences", json!({"action_and_reasoning": "Note.", "items": [{"title": tag}]})).await;
                        }
                        2 => {
                            // The user path, concurrently with the agent path.
                            server.post(&format!("/api/threads/{thread}/preferences"), &json!({"title": tag})).await.expect(201);
                        }
                        _ => {
                            let env = server.tool(&thread, "chart_generator", json!({
                                "action_and_reasoning": "Chart.",
                                "chart_type": "line",
                                "title": tag,
                                "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]}
                            })).await;
                            assert_eq!(env["success"], json!(true), "{env}");
                        }
                    }
                }
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.expect("client task");
        }
        let elapsed = started.elapsed();
        println!(
            "[{engine:?}] {} mixed writes by {CLIENTS} clients over {THREADS} threads: {elapsed:?}",
            CLIENTS * OPS
        );

        let per_thread = CLIENTS / THREADS * OPS / 4;
        for t in 0..THREADS {
            let thread = format!("mix-{t}");
            let ws = server.workspace(&thread).await;
            let mine: BTreeSet<usize> = (0..CLIENTS).filter(|c| c % THREADS == t).collect();
            let expected = |kind: usize| -> BTreeSet<String> {
                mine.iter()
                    .flat_map(|c| (0..OPS).filter(move |j| j % 4 == kind).map(move |j| format!("<{c:02}-{j:03}..>")))
                    .collect()
            };

            let content = ws["document"]["content"].as_str().unwrap();
            assert_eq!(content.chars().count(), per_thread * 10, "{thread}");
            assert_eq!(ws["document"]["version"], json!(per_thread), "{thread}");
            let chunks: BTreeSet<String> = (0..per_thread).map(|k| content[k * 10..k * 10 + 10].to_string()).collect();
            assert_eq!(chunks, expected(0), "{thread}: document");

            let todos: BTreeSet<String> = ws["todos"].as_array().unwrap().iter().map(|x| x["text"].as_str().unwrap().to_string()).collect();
            assert_eq!(ws["todos"].as_array().unwrap().len(), per_thread, "{thread}");
            assert_eq!(todos, expected(1), "{thread}: todos");
            let positions = todo_positions(&tdb.db, &thread).await;
            assert_eq!(positions, (0..i64::try_from(per_thread).unwrap()).collect::<Vec<_>>(), "{thread}");

            let prefs: BTreeSet<String> = ws["preferences"].as_array().unwrap().iter().map(|x| x["title"].as_str().unwrap().to_string()).collect();
            assert_eq!(ws["preferences"].as_array().unwrap().len(), per_thread, "{thread}");
            assert_eq!(prefs, expected(2), "{thread}: preferences");

            let charts: BTreeMap<String, String> = ws["artifacts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| (x["title"].as_str().unwrap().to_string(), x["artifact_type"].as_str().unwrap().to_string()))
                .collect();
            assert_eq!(ws["artifacts"].as_array().unwrap().len(), per_thread, "{thread}");
            assert_eq!(charts.keys().cloned().collect::<BTreeSet<_>>(), expected(3), "{thread}: artifacts");
            assert!(charts.values().all(|t| t == "line_chart"));
        }
        stop(tdb, server).await;
    }
}
