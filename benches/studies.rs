//! What a study with 1,000 sessions costs to list, summarise and export (issue 42's target:
//! each under a second), on SQLite and PostgreSQL.
//!
//! The study has two conditions; 1,000 participants enter and consent (each gets a thread
//! seeded from the task: an objective and a document), half of them start and finish. Then
//! criterion times `Studies::list` (the researcher's list with its counts), the summary (every
//! session's measures, then n/mean/sd/median per condition) and the pseudonymised
//! `haico-study/1` export (the same, plus every thread's recording), as `GET /api/studies`,
//! `GET …/summary` and `GET …/export` run them.
//!
//! `cargo bench --bench studies` (add `-- sqlite` or `-- postgres` to pick one engine).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use haico::{
    people::Principal,
    store::StudyStatus,
    studies::{Studies, export},
    workspace::Workspaces,
};
use serde_json::{Map, json};
use support::{BenchDb, Engine, postgres_available, tokio_runtime};
use tokio::runtime::Runtime;

const SESSIONS: usize = 1_000;

fn design() -> serde_json::Value {
    json!({
        "title": "Benchmark study",
        "task": {"title": "Plan a dinner", "instructions": "Plan it with the assistant.",
                 "seed": {"objective": "A dinner for four", "document": {"content": "# Menu\n"}}},
        "consent": {"text": "We record your messages and edits."},
        "entry": {"params": ["STUDY_ID", "SESSION_ID"], "keep_params": ["STUDY_ID"]},
        "completion": {"completed": {"code": "DONE"}},
        "conditions": [
            {"key": "workspace", "label": "Workspace", "panels": ["objective", "document"], "tools": "*"},
            {"key": "chat", "label": "Plain chat", "panels": [], "tools": []}
        ]
    })
}

/// A study with [`SESSIONS`] sessions; its id.
async fn populate(studies: &Studies) -> String {
    let local = Principal::Local;
    let view = studies.create(&local, design()).await.unwrap();
    let id = view.row.id.clone();
    let key = view.row.entry_key.clone();
    studies
        .advance(&local, &id, StudyStatus::Draft, StudyStatus::Open)
        .await
        .unwrap();
    let started = Instant::now();
    for i in 0..SESSIONS {
        let mut params = Map::new();
        params.insert("STUDY_ID".into(), json!("bench"));
        params.insert("SESSION_ID".into(), json!(format!("s{i}")));
        let entered = studies
            .enter(&key, Some(format!("participant-{i:05}")), params)
            .await
            .unwrap();
        let participant = studies.participant(&entered.token).await.unwrap().unwrap();
        studies.consent(&participant, true).await.unwrap();
        if i % 2 == 0 {
            studies.start(&participant).await.unwrap();
            studies.finish(&participant).await.unwrap();
        }
    }
    eprintln!(
        "studies: {SESSIONS} sessions entered and consented in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    id
}

fn speed(c: &mut Criterion, rt: &Runtime, engine: Engine) {
    let db = rt.block_on(BenchDb::open(engine)).unwrap();
    let studies = Studies::new(Workspaces::standalone(db.db.clone()));
    let id = rt.block_on(populate(&studies));
    let local = Principal::Local;
    // One timed pass of each, printed, before criterion's samples.
    rt.block_on(async {
        let at = Instant::now();
        let listed = studies.list(&local).await.unwrap();
        let list_ms = at.elapsed().as_secs_f64() * 1e3;
        assert_eq!(listed[0].by_status.values().sum::<i64>(), SESSIONS as i64);
        let at = Instant::now();
        let (_, design, data) = studies.data(&local, &id).await.unwrap();
        let summary = export::summary(&design, &data);
        let summary_ms = at.elapsed().as_secs_f64() * 1e3;
        assert_eq!(summary["sessions"], json!(SESSIONS));
        let at = Instant::now();
        let (study, design, data) = studies.data(&local, &id).await.unwrap();
        let body = export::export_jsonl(
            &study,
            &design,
            &data,
            export::Identities::Pseudonymised,
            "bench",
            "instructions",
        )
        .unwrap();
        let export_ms = at.elapsed().as_secs_f64() * 1e3;
        eprintln!(
            "studies/{}: {SESSIONS} sessions: list {list_ms:.0} ms, summary {summary_ms:.0} ms, \
             export {export_ms:.0} ms ({:.1} MB)",
            engine.name(),
            body.len() as f64 / 1e6
        );
    });
    let mut group = c.benchmark_group(format!("studies/{}", engine.name()));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("list", |b| {
        b.to_async(rt)
            .iter(|| async { studies.list(&local).await.unwrap() });
    });
    group.bench_function("summary", |b| {
        b.to_async(rt).iter(|| async {
            let (_, design, data) = studies.data(&local, &id).await.unwrap();
            export::summary(&design, &data)
        });
    });
    group.bench_function("export", |b| {
        b.to_async(rt).iter(|| async {
            let (study, design, data) = studies.data(&local, &id).await.unwrap();
            export::export_jsonl(
                &study,
                &design,
                &data,
                export::Identities::Pseudonymised,
                "bench",
                "instructions",
            )
            .unwrap()
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
        speed(c, &rt, engine);
    }
}

criterion_group!(studies, benches);
criterion_main!(studies);
