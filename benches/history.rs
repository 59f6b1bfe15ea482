//! What history costs, on SQLite and PostgreSQL:
//!
//! 1. **Storage**: a 1 MB document, then 1,000 appends of 100 bytes through
//!    `append_to_document`; printed: what the history tables hold for the thread before and
//!    after (the JSON of its panel records plus its revision rows, `history_bytes`), and the
//!    growth of the history tables on disk (PostgreSQL: `pg_total_relation_size` of
//!    `revisions` + `panel_changes`, TOAST and indexes included; SQLite: the database file
//!    after a WAL checkpoint, which also counts the document's own pages).
//! 2. **Speed**: a thread with a 1 MB document, a plan, preferences and 10,000 revisions (a
//!    mix of appends, small document edits, ticks, new steps, objectives and preference edits);
//!    criterion times `workspace_at` a random revision and `document_diff` of two random
//!    revisions, as `GET …/workspace?at=` and `GET …/document/diff` run them.
//!
//! `cargo bench --bench history` (add `-- sqlite` or `-- postgres` to pick one engine).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use haico::workspace::Workspaces;
use serde_json::json;
use support::{Bench, BenchDb, Engine, postgres_available, tokio_runtime, with_reason};
use tokio::runtime::Runtime;

const REVISIONS: usize = 10_000;

async fn history_bytes(bench: &Bench) -> i64 {
    let mut repo = bench.runtime.database().begin_read().await.unwrap();
    let bytes = repo.history().history_bytes(&bench.thread).await.unwrap();
    repo.rollback().await.unwrap();
    bytes
}

/// Bytes the history tables take on disk (PostgreSQL), or the database file (SQLite).
async fn disk_bytes(db: &BenchDb) -> i64 {
    db.disk_bytes().await.unwrap()
}

fn storage(rt: &Runtime, engine: Engine) {
    rt.block_on(async {
        let db = BenchDb::open(engine).await.unwrap();
        let bench = Bench::new(&db.db, "storage").await.unwrap();
        bench.set_document(1_000_000).await.unwrap();
        let (history_before, disk_before) = (history_bytes(&bench).await, disk_bytes(&db).await);
        let line = format!("{}\n", "x".repeat(99));
        let started = Instant::now();
        for _ in 0..1_000 {
            bench
                .ok("append_to_document", with_reason(json!({ "text": line })))
                .await
                .unwrap();
        }
        let took = started.elapsed();
        let (history_after, disk_after) = (history_bytes(&bench).await, disk_bytes(&db).await);
        eprintln!(
            "history/{}/storage: 1 MB document + 1,000 appends of 100 B: history rows {} → {} \
             bytes (+{:.2} MB); on disk +{:.2} MB ({}); appends took {:.2} ms each",
            engine.name(),
            history_before,
            history_after,
            (history_after - history_before) as f64 / 1e6,
            (disk_after - disk_before) as f64 / 1e6,
            match engine {
                Engine::Sqlite => "database file after a checkpoint",
                Engine::Postgres => "revisions + panel_changes, TOAST and indexes",
            },
            took.as_secs_f64() * 1000.0 / 1000.0
        );
        db.cleanup().await;
    });
}

/// A thread with a 1 MB document and `REVISIONS` revisions of mixed changes.
async fn long_history(db: &BenchDb) -> Bench {
    let bench = Bench::new(&db.db, "long").await.unwrap();
    bench.set_document(1_000_000).await.unwrap();
    bench.add_steps(200).await.unwrap();
    bench
        .ok(
            "add_preferences",
            with_reason(
                json!({"items": [{"title": "Budget"}, {"title": "Trains", "kind": "hard"}]}),
            ),
        )
        .await
        .unwrap();
    let started = Instant::now();
    let workspaces = Workspaces::standalone(db.db.clone());
    let mut made = 3;
    while made < REVISIONS {
        let i = made;
        match i % 6 {
            0 | 1 => {
                let text = format!("\nLine {i}: a short note appended to the document.");
                bench
                    .ok("append_to_document", with_reason(json!({ "text": text })))
                    .await
                    .unwrap();
            }
            2 => {
                // A small edit in the middle of the document, as a person saves it.
                let mut doc = workspaces.document(&bench.thread).get().await.unwrap();
                let at = doc.content.len() / 2;
                let at = (0..=at)
                    .rev()
                    .find(|i| doc.content.is_char_boundary(*i))
                    .unwrap();
                doc.content.insert_str(at, &format!(" [edit {i}] "));
                workspaces
                    .document(&bench.thread)
                    .put(&doc.content, None, None)
                    .await
                    .unwrap();
            }
            3 => {
                let index = (i % 200) + 1;
                bench
                    .ok("toggle_todos", with_reason(json!({"indices": [index]})))
                    .await
                    .unwrap();
            }
            4 => {
                bench
                    .ok(
                        "set_objective",
                        with_reason(json!({"objective": format!("Goal number {i}")})),
                    )
                    .await
                    .unwrap();
            }
            _ => {
                bench
                    .ok(
                        "update_preferences",
                        with_reason(json!({"updates": [{"index": 1, "subtitle": format!("at most {i} EUR")}]})),
                    )
                    .await
                    .unwrap();
            }
        }
        made += 1;
    }
    eprintln!(
        "history/{}: {REVISIONS} revisions built in {:.1} s",
        db.engine.name(),
        started.elapsed().as_secs_f64()
    );
    bench
}

fn speed(c: &mut Criterion, rt: &Runtime, engine: Engine) {
    let db = rt.block_on(BenchDb::open(engine)).unwrap();
    let bench = rt.block_on(long_history(&db));
    let workspaces = Workspaces::standalone(db.db.clone());
    let latest = rt.block_on(async {
        let page = workspaces
            .history(&bench.thread, None, Some(1))
            .await
            .unwrap();
        page.revisions[0].rev
    });
    assert!(latest >= REVISIONS as i64, "only {latest} revisions");
    let mut group = c.benchmark_group(format!("history/{}", engine.name()));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(40);
    let mut rng = fastrand::Rng::with_seed(10_000);
    group.bench_function("workspace_at_random_rev_10k_revs_1MB_doc", |b| {
        b.to_async(rt).iter(|| {
            let rev = rng.i64(1..=latest);
            let workspaces = &workspaces;
            let thread = &bench.thread;
            async move {
                let ws = workspaces.workspace_at(thread, rev).await.unwrap();
                assert!(ws.document.is_some());
                ws
            }
        });
    });
    let mut rng = fastrand::Rng::with_seed(20_000);
    group.bench_function("document_diff_random_revs_10k_revs_1MB_doc", |b| {
        b.to_async(rt).iter(|| {
            let from = rng.i64(1..latest);
            let to = rng.i64(from..=latest);
            let workspaces = &workspaces;
            let thread = &bench.thread;
            async move {
                workspaces
                    .document_diff(thread, from, Some(to))
                    .await
                    .unwrap()
            }
        });
    });
    group.finish();
    rt.block_on(db.cleanup());
}

fn benches(c: &mut Criterion) {
    let rt = tokio_runtime().unwrap();
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |engine: Engine| filter.is_empty() || filter.iter().any(|f| f == engine.name());
    for engine in [Engine::Sqlite, Engine::Postgres] {
        if !wants(engine) || (engine == Engine::Postgres && !rt.block_on(postgres_available())) {
            continue;
        }
        storage(&rt, engine);
        speed(c, &rt, engine);
    }
}

criterion_group!(history, benches);
criterion_main!(history);
