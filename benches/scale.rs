//! Tool calls on a big workspace: `list_todos`, `toggle_todos` (three indices spread over the
//! plan) and `append_to_document` (a short line) on a thread with 1,000 steps and a 100 KB
//! document, then 10,000 steps and a 1 MB document, on SQLite and PostgreSQL, through
//! `ToolRuntime::call` as the agent makes them. The two sizes show how each call grows.
//!
//! `cargo bench --bench scale` (add `-- sqlite` or `-- postgres` to pick one engine).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use support::{Bench, BenchDb, Engine, postgres_available, tokio_runtime, with_reason};
use tokio::runtime::Runtime;

/// The fixtures: (steps in the plan, characters in the document, label).
const SIZES: [(usize, usize, &str); 2] = [
    (1_000, 100_000, "1k_todos+100KB_doc"),
    (10_000, 1_000_000, "10k_todos+1MB_doc"),
];

fn bench_engine(c: &mut Criterion, rt: &Runtime, engine: Engine) -> anyhow::Result<()> {
    let db = rt.block_on(BenchDb::open(engine))?;
    let mut group = c.benchmark_group(format!("scale/{}", engine.name()));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);

    for (todos, chars, label) in SIZES {
        let started = Instant::now();
        let bench = rt.block_on(async {
            let bench = Bench::new(&db.db, &format!("scale-{todos}")).await?;
            bench.add_steps(todos).await?;
            bench.set_document(chars).await?;
            anyhow::Ok(bench)
        })?;
        eprintln!(
            "{}: fixture with {todos} steps and a {chars}-character document built in {:.2} s",
            engine.name(),
            started.elapsed().as_secs_f64()
        );

        let list_args = with_reason(json!({}));
        group.bench_with_input(BenchmarkId::new("list_todos", label), &todos, |b, _| {
            b.to_async(rt).iter(|| async {
                let call = bench
                    .runtime
                    .call(&bench.tools, "list_todos", list_args.clone())
                    .await;
                assert!(call.envelope.success, "{:?}", call.envelope.error);
                call
            });
        });

        // First, middle and last step: each call flips them, so the plan only alternates.
        let toggle_args = with_reason(json!({"indices": [1, todos / 2, todos]}));
        group.bench_with_input(BenchmarkId::new("toggle_todos", label), &todos, |b, _| {
            b.to_async(rt).iter(|| async {
                let call = bench
                    .runtime
                    .call(&bench.tools, "toggle_todos", toggle_args.clone())
                    .await;
                assert!(call.envelope.success, "{:?}", call.envelope.error);
                call
            });
        });

        let append_args = with_reason(json!({"text": "\n- one more short line for the plan"}));
        group.bench_with_input(
            BenchmarkId::new("append_to_document", label),
            &chars,
            |b, &chars| {
                b.to_async(rt).iter_custom(|iters| {
                    let bench = &bench;
                    let args = &append_args;
                    async move {
                        // Back to the fixture's size before every sample (not timed), so
                        // appends always land on a document of the stated size.
                        bench.set_document(chars).await.expect("reset the document");
                        let started = Instant::now();
                        for _ in 0..iters {
                            let call = bench
                                .runtime
                                .call(&bench.tools, "append_to_document", args.clone())
                                .await;
                            assert!(call.envelope.success, "{:?}", call.envelope.error);
                        }
                        started.elapsed()
                    }
                });
            },
        );
    }
    group.finish();
    rt.block_on(db.cleanup());
    Ok(())
}

fn scale(c: &mut Criterion) {
    let rt = tokio_runtime().expect("tokio runtime");
    if let Err(err) = bench_engine(c, &rt, Engine::Sqlite) {
        panic!("SQLite benchmark failed: {err:#}");
    }
    if rt.block_on(postgres_available())
        && let Err(err) = bench_engine(c, &rt, Engine::Postgres)
    {
        panic!("PostgreSQL benchmark failed: {err:#}");
    }
}

criterion_group!(benches, scale);
criterion_main!(benches);
