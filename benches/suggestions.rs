//! What deciding a suggestion costs on a large document, on SQLite and PostgreSQL (issue 25:
//! accepting on a 1 MB document with 100 open suggestions answers in under 50 ms).
//!
//! A thread in suggest mode holds a 1 MB document of numbered lines and 100 open suggestions
//! (each an `edit_document` on a line of its own). Each measured iteration first makes one more
//! suggestion through the tool runtime (not timed), then times `ThreadSuggestions::accept`
//! (what `POST …/suggestions/{id}/accept` runs: claim, read the body held, apply by text,
//! write the new version, history and events, commit), so 100 others stay open throughout.
//! A second measure times listing the 100 open suggestions with their diffs against the
//! 1 MB document (`GET …/suggestions?status=open`).
//!
//! `cargo bench --bench suggestions` (add `-- sqlite` or `-- postgres` to pick one engine).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use haico::workspace::{DocumentMode, SuggestionStatus, ThreadChange, Workspaces};
use serde_json::json;
use support::{Bench, BenchDb, Engine, postgres_available, tokio_runtime, with_reason};
use tokio::runtime::Runtime;

const OPEN: usize = 100;
const LINES: usize = 12_000;

/// A 1 MB body of numbered lines, each unique.
fn body() -> String {
    let mut text = String::with_capacity(1_000_000);
    for i in 0..LINES {
        text.push_str(&format!(
            "Line {i:05}: the quick brown fox jumps over the lazy dog, then plans a trip.\n"
        ));
    }
    text.truncate(1_000_000);
    text
}

/// Suggests changing the start of line `line` (`to_a`: "the" → "a", else back).
async fn suggest_line(bench: &Bench, line: usize, to_a: bool) {
    let (old, new) = if to_a {
        (format!("Line {line:05}: the"), format!("Line {line:05}: a"))
    } else {
        (format!("Line {line:05}: a"), format!("Line {line:05}: the"))
    };
    bench
        .ok(
            "edit_document",
            with_reason(json!({"edits": [{"old_text": old, "new_text": new}]})),
        )
        .await
        .unwrap();
}

fn measure(c: &mut Criterion, rt: &Runtime, engine: Engine) {
    let db = rt.block_on(BenchDb::open(engine)).unwrap();
    let bench = rt.block_on(Bench::new(&db.db, "suggest")).unwrap();
    let workspaces = Workspaces::standalone(db.db.clone());
    rt.block_on(async {
        bench
            .ok("update_document", with_reason(json!({"content": body()})))
            .await
            .unwrap();
        workspaces
            .threads()
            .change(
                &bench.thread,
                ThreadChange {
                    document_mode: Some(DocumentMode::Suggest),
                    ..ThreadChange::default()
                },
            )
            .await
            .unwrap();
        for line in 0..OPEN {
            suggest_line(&bench, line, true).await;
        }
    });
    let mut group = c.benchmark_group(format!("suggestions/{}", engine.name()));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8))
        .sample_size(20);
    let mut next = 0usize;
    let mut flipped = vec![false; LINES];
    let mut id = OPEN as i64;
    group.bench_function("accept_1MB_doc_100_open", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let line = OPEN + next % (LINES - OPEN - 1);
                    next += 1;
                    suggest_line(&bench, line, !flipped[line]).await;
                    flipped[line] = !flipped[line];
                    id += 1;
                    let started = Instant::now();
                    let accepted = workspaces
                        .suggestions(&bench.thread)
                        .accept(id)
                        .await
                        .unwrap();
                    spent += started.elapsed();
                    assert_eq!(
                        accepted.suggestion.suggestion.status,
                        SuggestionStatus::Accepted
                    );
                }
                spent
            })
        });
    });
    group.bench_function("list_100_open_with_diffs_1MB_doc", |b| {
        b.to_async(rt).iter(|| {
            let workspaces = &workspaces;
            let thread = &bench.thread;
            async move {
                let open = workspaces
                    .suggestions(thread)
                    .list(Some(SuggestionStatus::Open))
                    .await
                    .unwrap();
                assert_eq!(open.len(), OPEN);
                open
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
        measure(c, &rt, engine);
    }
}

criterion_group!(suggestions, benches);
criterion_main!(suggestions);
