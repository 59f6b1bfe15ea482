//! One tool call through `ToolRuntime::call` (argument checks, one transaction, envelope) on
//! SQLite and PostgreSQL: a cheap read (`list_todos` on a 10-step plan), a small write
//! (`append_to_document`), and the bare transaction every call pays for (begin, lock the
//! thread row, commit) as the floor.
//!
//! `cargo bench --bench tool_call` (add `-- sqlite` or `-- postgres` to pick one engine).
//! PostgreSQL runs in a fresh schema that is dropped at the end; set
//! `HAICO_BENCH_POSTGRES_URL` to point elsewhere than `postgres://postgres@127.0.0.1:5432`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use support::{Bench, BenchDb, Engine, postgres_available, tokio_runtime, with_reason};
use tokio::runtime::Runtime;

fn bench_engine(c: &mut Criterion, rt: &Runtime, engine: Engine) -> anyhow::Result<()> {
    let db = rt.block_on(BenchDb::open(engine))?;
    let reader = rt.block_on(async {
        let bench = Bench::new(&db.db, "bench-list").await?;
        bench.add_steps(10).await?;
        anyhow::Ok(bench)
    })?;
    let writer = rt.block_on(Bench::new(&db.db, "bench-append"))?;

    let mut group = c.benchmark_group(format!("tool_call/{}", engine.name()));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);

    let list_args = with_reason(json!({}));
    group.bench_function("list_todos", |b| {
        b.to_async(rt).iter(|| async {
            let call = reader
                .runtime
                .call(&reader.tools, "list_todos", list_args.clone())
                .await;
            assert!(call.envelope.success, "{:?}", call.envelope);
            call
        });
    });

    let append_args = with_reason(json!({"text": "\n- one more short line for the plan"}));
    group.bench_function("append_to_document", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let writer = &writer;
            let args = &append_args;
            async move {
                // Start every sample from an empty document, so it stays small (at most a few
                // tens of KB after the largest sample).
                writer
                    .ok(
                        "update_document",
                        with_reason(json!({"content": "", "replace_all": true})),
                    )
                    .await
                    .expect("reset the document");
                let started = Instant::now();
                for _ in 0..iters {
                    let call = writer
                        .runtime
                        .call(&writer.tools, "append_to_document", args.clone())
                        .await;
                    assert!(call.envelope.success, "{:?}", call.envelope);
                }
                started.elapsed()
            }
        });
    });

    // The floor under every call: begin a write transaction, lock the thread row, commit.
    let list_thread = haico::ThreadId::parse("bench-list").expect("a thread id");
    group.bench_function("empty_transaction", |b| {
        b.to_async(rt).iter(|| async {
            let mut repo = db.db.begin_write().await.expect("begin");
            let turn = repo
                .threads()
                .lock_thread(&list_thread)
                .await
                .expect("lock");
            assert!(turn.is_some());
            repo.commit().await.expect("commit");
        });
    });
    group.finish();

    rt.block_on(db.cleanup());
    Ok(())
}

fn tool_call(c: &mut Criterion) {
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

criterion_group!(benches, tool_call);
criterion_main!(benches);
