//! `haico-limit`: how fast haico's own storage path runs haico's mixed workload with no server
//! around it, so the server's throughput has a denominator.
//!
//! It creates a fresh database, opens it with `haico_store::Database::connect` (the store's
//! migrations, its SQLite writer and readers or its PostgreSQL pool and lender, configured as
//! `haico serve` configures them), seeds `--threads` threads as `haico-load` does, and then
//! `--clients` concurrent tasks run `haico-load`'s weighted op mix. Each op is the tool call
//! made through the domain layer below the tool runtime (`calls.rs`): the same
//! `haico_core::workspace::Workspaces` and `Edit` calls `src/tools/` makes, committed and
//! announced by the workspace's one commit path. So the limit and the server send the same
//! statements by construction; what the limit leaves out is HTTP, JSON, the tool runtime's
//! argument checks and envelope, metrics and logging.
//!
//! It prints calls/s, latency percentiles, its own CPU time (which, for SQLite, includes all
//! of SQLite's work) and, on PostgreSQL, the round trips per call. Failures are counted as
//! `haico-load` counts them; `refused` says how many of them were the workspace refusing the
//! arguments by one of its rules (the server answers those with the same failure envelope),
//! `errors` the rest, which a healthy run has none of.

mod calls;
mod scratch;
mod stats;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use haico_core::{ThreadId, workspace::Workspaces};
use haico_load::{cpu, workload::Op};
use haico_store::{Database, PoolConfig};
use serde_json::json;

use calls::LoadThread;
use scratch::Scratch;
use stats::Stats;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// A SQLite file, through the store's writer and readers (rusqlite), as `haico serve`.
    Sqlite,
    /// PostgreSQL, through the store's pool and lender (sqlx), as `haico serve`.
    Postgres,
}

/// The limit of haico's mixed tool-call workload: the product's own storage path, no server.
#[derive(Debug, Parser)]
#[command(name = "haico-limit", version, about)]
struct Args {
    #[arg(long, value_enum)]
    engine: Engine,
    /// PostgreSQL server to create the scratch database on (it is dropped at the end).
    #[arg(
        long,
        env = "HAICO_TEST_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    postgres: String,
    /// Concurrent callers.
    #[arg(long, short = 'c', default_value_t = 32)]
    clients: usize,
    /// Threads the calls spread over.
    #[arg(long, default_value_t = 50)]
    threads: usize,
    /// Measured seconds, after the warm-up.
    #[arg(long, short = 'd', default_value_t = 20.0)]
    duration: f64,
    /// Warm-up seconds (calls run, not counted).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Tokio worker threads (the server runs one per core).
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// PostgreSQL connections, or SQLite reader connections (at most 8), as the server's
    /// `HAICO_DB_MAX_CONNECTIONS` (default: the server's default for this machine).
    #[arg(long, alias = "readers")]
    connections: Option<u32>,
    /// SQLite: write calls that may share one commit, as the server's
    /// `HAICO_SQLITE_GROUP_COMMIT` (1: each call commits on its own).
    #[arg(long, default_value_t = haico_store::DEFAULT_SQLITE_GROUP_COMMIT)]
    group: usize,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json_out: Option<std::path::PathBuf>,
    /// SQL to run once after the migrations, on a connection of its own, for what-if
    /// experiments (dropping an index, changing a setting) before a change is made in haico.
    #[arg(long, value_name = "SQL")]
    prepare: Option<String>,
    /// Random seed (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
}

impl Args {
    /// The pool settings, as `haico serve`'s flags make them.
    fn pool_config(&self) -> PoolConfig {
        PoolConfig {
            max_connections: self
                .connections
                .unwrap_or_else(haico_store::default_max_connections),
            sqlite_group_commit: self.group.max(1),
            ..PoolConfig::default()
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.clients == 0 || args.threads == 0 || args.duration <= 0.0 || args.duration > 3600.0 {
        bail!("--clients and --threads must be at least 1, --duration in (0, 3600]");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let scratch = match args.engine {
            Engine::Sqlite => Scratch::sqlite()?,
            Engine::Postgres => Scratch::postgres(&args.postgres).await?,
        };
        let outcome = run(&args, &scratch).await;
        scratch.drop_database().await;
        let report = outcome?;
        let text = serde_json::to_string_pretty(&report)?;
        if let Some(path) = &args.json_out {
            std::fs::write(path, text.clone() + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
        println!("{text}");
        Ok(())
    })
}

async fn run(args: &Args, scratch: &Scratch) -> Result<serde_json::Value> {
    let config = args.pool_config();
    let db = Database::connect(&scratch.url, &config)
        .await
        .with_context(|| format!("opening {}", scratch.url))?;
    let outcome = measure(args, scratch, &db, &config).await;
    db.close().await;
    outcome
}

async fn measure(
    args: &Args,
    scratch: &Scratch,
    db: &Database,
    config: &PoolConfig,
) -> Result<serde_json::Value> {
    if let Some(sql) = &args.prepare {
        scratch.prepare(sql).await?;
    }
    let workspaces = Workspaces::standalone(db.clone());
    let threads = (0..args.threads)
        .map(|i| Ok(LoadThread::new(ThreadId::parse(&format!("load-{i:02}"))?)))
        .collect::<Result<Vec<_>>>()?;
    let threads = Arc::new(threads);
    let setup = Instant::now();
    seed(&workspaces, &threads).await?;
    let setup = setup.elapsed();

    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let deadline = measure_from + Duration::from_secs_f64(args.duration);
    let before = Arc::new(std::sync::Mutex::new(None));
    let mut tasks = Vec::new();
    for client in 0..args.clients {
        let workspaces = workspaces.clone();
        let threads = Arc::clone(&threads);
        let before = Arc::clone(&before);
        tasks.push(tokio::spawn(async move {
            let mut rng = fastrand::Rng::with_seed(seed.wrapping_add(client as u64));
            let mut stats = Stats::new()?;
            let mut seq = 0u64;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                if now >= measure_from
                    && let Ok(mut before) = before.lock()
                    && before.is_none()
                {
                    *before = Some((cpu::sample(None)?, workspaces.database().round_trips()));
                }
                seq += 1;
                let thread = &threads[rng.usize(..threads.len())];
                let call = thread.next_call(&mut rng, client, seq);
                let op = call.op;
                let began = Instant::now();
                let outcome = calls::run(&workspaces, thread, call).await;
                let took = began.elapsed();
                if began >= measure_from {
                    stats.record(op, took, outcome.as_ref().err())?;
                }
            }
            anyhow::Ok(stats)
        }));
    }
    let mut total = Stats::new()?;
    for task in tasks {
        total.merge(&task.await??)?;
    }
    let wall = deadline.saturating_duration_since(measure_from);
    let cpu_after = cpu::sample(None)?;
    let trips_after = db.round_trips();
    let (cpu_before, trips_before) = before
        .lock()
        .ok()
        .and_then(|b| *b)
        .context("the run never reached its measured part")?;
    let used = cpu_after.since(&cpu_before);
    let calls = total.all.len();
    let secs = wall.as_secs_f64().max(1e-9);
    let ms = |q: f64| total.all.value_at_quantile(q) as f64 / 1000.0;
    // Calls still in flight at the deadline are counted in the trips, not in the calls: a
    // slight over-count, a few calls in tens of thousands.
    let trips = match (trips_before, trips_after) {
        (Some(before), Some(after)) if calls > 0 => {
            json!((after.saturating_sub(before)) as f64 / calls as f64)
        }
        _ => json!(null),
    };
    Ok(json!({
        "engine": args.engine.to_possible_value().map(|v| v.get_name().to_string()),
        "clients": args.clients,
        "threads": args.threads,
        "workers": args.workers,
        "connections": config.max_connections,
        "group": config.sqlite_group_commit,
        "setup_s": setup.as_secs_f64(),
        "wall_s": secs,
        "total_calls": calls,
        "calls_per_sec": calls as f64 / secs,
        "latency_ms": {"p50": ms(0.5), "p90": ms(0.9), "p99": ms(0.99), "max": total.all.max() as f64 / 1000.0},
        "failures": total.failures,
        "errors": total.errors(),
        "refused": Op::ALL.iter().filter(|op| total.refused[op.index()] > 0).map(|op| (op.tool().to_string(), json!(total.refused[op.index()]))).collect::<serde_json::Map<_, _>>(),
        "failure_samples": total.samples,
        "refusal_samples": total.refusal_samples,
        "ops": Op::ALL.iter().map(|op| (op.tool().to_string(), json!(total.per_op[op.index()]))).collect::<serde_json::Map<_, _>>(),
        "process_cpu": {
            "share_of_wall": used.total() / secs,
            "cpu_us_per_call": if calls > 0 { used.total() * 1e6 / calls as f64 } else { 0.0 },
        },
        "round_trips_per_call": trips,
    }))
}

/// Creates every thread and gives it what `haico-load`'s setup gives it, through the same
/// calls as the workload.
async fn seed(workspaces: &Workspaces, threads: &[LoadThread]) -> Result<()> {
    for (i, thread) in threads.iter().enumerate() {
        workspaces
            .threads()
            .create(&thread.id, Some(&format!("Load thread {i}")))
            .await
            .with_context(|| format!("creating thread {}", thread.id))?;
        for call in calls::seed_calls() {
            let tool = call.op.tool();
            calls::run(workspaces, thread, call)
                .await
                .with_context(|| format!("seeding {} with {tool}", thread.id))?;
        }
    }
    Ok(())
}
