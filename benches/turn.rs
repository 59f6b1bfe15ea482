//! Agent turn overhead without a model: the replay provider answers instantly, so what is
//! measured is haico's own work per step — prompt rebuild (workspace read), tool call
//! (transaction, step record, events) and the turn's bookkeeping.
//!
//! `cargo bench --bench turn` — prints median and p90 per turn of 10 tool calls and per step,
//! on SQLite and PostgreSQL, for a small workspace and for one holding a 1 MB document and
//! 5,000 plan steps (`HAICO_LLM_AIDS=all` for the agent with the small-model aids). A plain
//! timing loop (not criterion) because a replay script is consumed
//! as it plays: the number of turns must be known up front.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{path::Path, sync::Arc, time::Instant};

use haico::{
    ThreadId,
    agent::{
        Agent, AgentConfig,
        prompt::{PromptBudget, PromptWorkspace, snapshot},
        providers::replay::ReplayModel,
    },
    events::InProcessBus,
    store::{Database, PoolConfig},
    tools::{ToolRuntime, build_tools},
    workspace::Workspaces,
};
use serde_json::{Value, json};

const TURNS: usize = 40;
const WARMUP: usize = 3;
const CALLS_PER_TURN: usize = 10;

fn script(turns: usize) -> Value {
    let calls = |t: usize| -> Value {
        json!([
            {"name": "set_objective", "arguments": {"objective": format!("Goal {t}"), "action_and_reasoning": "Noting the goal."}},
            {"name": "add_todos", "arguments": {"steps": [{"text": "a"}, {"text": "b", "depth": 1}], "action_and_reasoning": "Planning."}},
            {"name": "toggle_todos", "arguments": {"indices": [1], "action_and_reasoning": "Ticking off."}},
            {"name": "append_to_document", "arguments": {"text": "\nA line of text.", "action_and_reasoning": "Writing."}},
            {"name": "add_preferences", "arguments": {"items": [{"title": "Quiet"}], "action_and_reasoning": "Recording."}},
            {"name": "list_todos", "arguments": {"action_and_reasoning": "Checking."}},
            {"name": "update_todos", "arguments": {"updates": [{"index": 1, "text": "A"}], "action_and_reasoning": "Rewording."}},
            {"name": "remove_todos", "arguments": {"indices": [2], "action_and_reasoning": "Pruning."}},
            {"name": "chart_generator", "arguments": {"chart_type": "bar", "title": "T", "data": {"labels": ["x", "y"], "series": [{"name": "s", "values": [1, 2]}]}, "action_and_reasoning": "Showing."}},
            {"name": "list_artifacts", "arguments": {"limit": 5, "action_and_reasoning": "Looking back."}}
        ])
    };
    let mut responses = Vec::new();
    for t in 0..turns {
        responses.push(json!({"text": "Working on it.", "tool_calls": calls(t)}));
        responses.push(json!({"text": "Done."}));
    }
    json!({ "responses": responses })
}

async fn open(engine: &str, dir: &Path) -> (Database, Option<String>) {
    match engine {
        "sqlite" => {
            let url = format!("sqlite:{}", dir.join("turn.db").display());
            (
                Database::connect(&url, &PoolConfig::default())
                    .await
                    .unwrap(),
                None,
            )
        }
        _ => {
            let base = std::env::var("HAICO_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
            let schema = format!("haico_bench_turn_{}", std::process::id());
            let admin = sqlx::PgPool::connect(&base).await.unwrap();
            sqlx::query(&format!("CREATE SCHEMA {schema}"))
                .execute(&admin)
                .await
                .unwrap();
            admin.close().await;
            let url = format!("{base}?options=-csearch_path%3D{schema}");
            (
                Database::connect(&url, &PoolConfig::default())
                    .await
                    .unwrap(),
                Some(schema),
            )
        }
    }
}

async fn fill_large(db: &Database, thread: &ThreadId) {
    let runtime = ToolRuntime::new(db.clone());
    let tools = build_tools(thread);
    let doc = "x".repeat(1_000_000);
    let env = runtime
        .call(
            &tools,
            "update_document",
            json!({"content": doc, "action_and_reasoning": "Seed."}),
        )
        .await
        .envelope;
    assert!(env.success, "{env:?}");
    for batch in 0..5 {
        let steps: Vec<Value> = (0..1000)
            .map(|i| json!({"text": format!("step {batch}-{i}")}))
            .collect();
        let env = runtime
            .call(
                &tools,
                "add_todos",
                json!({"steps": steps, "action_and_reasoning": "Seed."}),
            )
            .await
            .envelope;
        assert!(env.success, "{env:?}");
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn run(engine: &str, large: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (db, schema) = open(engine, dir.path()).await;
    let thread = ThreadId::parse("bench").unwrap();
    let mut repo = db.begin_write().await.unwrap();
    repo.threads()
        .create_thread(&thread, "bench")
        .await
        .unwrap();
    repo.commit().await.unwrap();
    if large {
        fill_large(&db, &thread).await;
    }
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script(TURNS + WARMUP).to_string()).unwrap();
    let model = Arc::new(ReplayModel::load(&script_path).unwrap());
    let runtime = ToolRuntime::with_bus(db.clone(), Arc::new(InProcessBus::new()));
    // `HAICO_LLM_AIDS=all cargo bench --bench turn` measures the small-model aids' own cost
    // (the turn's notes in every snapshot, earlier turns read with their calls).
    let aids = std::env::var("HAICO_LLM_AIDS")
        .ok()
        .map(|text| text.parse().expect("HAICO_LLM_AIDS: none, all or a list"))
        .unwrap_or_default();
    let config = AgentConfig {
        aids,
        ..AgentConfig::default()
    };
    let agent = Arc::new(Agent::new(runtime, model, config));
    let mut times = Vec::with_capacity(TURNS);
    for i in 0..TURNS + WARMUP {
        let started = Instant::now();
        let turn = agent.start(&thread, "Go on.", None).await.unwrap();
        turn.task.await.unwrap();
        if i >= WARMUP {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    // Every turn must have completed with its ten steps.
    let mut repo = db.begin_read().await.unwrap();
    let turns = repo.turns().conversation(&thread).await.unwrap();
    repo.rollback().await.unwrap();
    assert_eq!(turns.len(), TURNS + WARMUP);
    assert!(
        turns
            .iter()
            .all(|t| t.status == "completed" && t.tool_calls.len() == CALLS_PER_TURN)
    );
    assert!(turns.iter().all(|t| t.tool_calls.iter().all(|s| s.success)));
    // Where the time goes: the median duration of each tool, as the tool calls recorded it.
    let mut by_tool: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for turn in turns.iter().skip(WARMUP) {
        for call in &turn.tool_calls {
            by_tool
                .entry(call.tool.clone())
                .or_default()
                .push(call.duration_ms);
        }
    }
    let tool_medians: Vec<String> = by_tool
        .iter_mut()
        .map(|(tool, d)| {
            d.sort_by(f64::total_cmp);
            format!("{tool} {:.2}", percentile(d, 0.5))
        })
        .collect();
    let tools_total: f64 = by_tool.values().map(|d| percentile(d, 0.5)).sum();
    times.sort_by(f64::total_cmp);
    let median = percentile(&times, 0.5);
    let p90 = percentile(&times, 0.9);
    println!(
        "turn/{engine}/{workspace}: per turn of {CALLS_PER_TURN} tool calls median {median:.2} ms \
         (p90 {p90:.2} ms); per step median {:.3} ms (p90 {:.3} ms); {TURNS} turns",
        median / CALLS_PER_TURN as f64,
        p90 / CALLS_PER_TURN as f64,
        workspace = if large { "1MB-doc+5k-steps" } else { "small" },
    );
    println!(
        "    tool medians (ms): {}; sum {tools_total:.2} ms of the turn's {median:.2} ms",
        tool_medians.join(", ")
    );
    // What one prompt rebuild from scratch costs (read + render), apart from the turn.
    let workspaces = Workspaces::standalone(db.clone());
    let mut rebuilds = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        let ws = PromptWorkspace::load(&workspaces, &thread, &PromptBudget::default())
            .await
            .unwrap();
        std::hint::black_box(snapshot(&ws));
        rebuilds.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    rebuilds.sort_by(f64::total_cmp);
    println!(
        "    one prompt rebuild from scratch (read + render): median {:.2} ms",
        percentile(&rebuilds, 0.5)
    );
    db.close().await;
    if let Some(schema) = schema {
        let base = std::env::var("HAICO_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
        let admin = sqlx::PgPool::connect(&base).await.unwrap();
        sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
            .execute(&admin)
            .await
            .unwrap();
        admin.close().await;
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks engines ("sqlite", "postgres").
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for engine in ["sqlite", "postgres"] {
        if !filter.is_empty() && !filter.iter().any(|f| engine.contains(f.as_str())) {
            continue;
        }
        for large in [false, true] {
            rt.block_on(run(engine, large));
        }
    }
}
