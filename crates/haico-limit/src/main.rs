//! `haico-limit`: how fast the database itself runs haico's mixed workload, so the server's
//! throughput has a denominator.
//!
//! It creates a fresh database with haico's migrations, seeds `--threads` threads as
//! `haico-load` does, and then `--clients` concurrent tasks run the same weighted op mix as
//! `haico-load` — but each op is only the SQL statements the server sends for that tool call
//! (`ops.rs`, `sql.rs`), in the same transactions, straight through a driver: no HTTP, no
//! JSON arguments, no tool runtime, no event bus. Engines:
//!
//! - `sqlite`: sqlx, set up as the server set it up until issue 24 (one writer, eight
//!   readers; the server now runs SQLite through rusqlite alone, inline, as `sqlite-sync`
//!   measures the driver);
//! - `sqlite-sync`: rusqlite on a writer thread and reader threads, one hand-over per call
//!   (`--group N` commits up to N queued calls together, each in its own savepoint);
//! - `postgres`: sqlx, a pool of 16, as the server.
//!
//! It prints calls/s, latency percentiles and its own CPU time (which, for SQLite, includes
//! all of SQLite's work).

mod drive_sqlx;
mod drive_sync;
mod ops;
mod sql;

use std::{
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use haico_load::{
    cpu,
    workload::{self, Op},
};
use hdrhistogram::Histogram;
use serde_json::json;

use ops::{Call, Learned};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// SQLite through sqlx, as the server used it until issue 24.
    Sqlite,
    /// SQLite through rusqlite, one hand-over per call.
    SqliteSync,
    /// PostgreSQL through sqlx, as the server uses it.
    Postgres,
}

/// The driver-level limit of haico's mixed tool-call workload.
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
    /// `sqlite-sync`: reader threads.
    #[arg(long, default_value_t = 4)]
    readers: usize,
    /// `sqlite-sync`: calls committed together at most (1: each call its own transaction).
    #[arg(long, default_value_t = 1)]
    group: usize,
    /// `sqlite-sync`: the writer's automatic WAL checkpoints off, and a thread of their own
    /// running a passive checkpoint every 100 ms instead, as the server does.
    #[arg(long)]
    checkpoint_thread: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json_out: Option<std::path::PathBuf>,
    /// SQL to run once after the migrations, for what-if experiments (dropping an index,
    /// changing a setting) before a change is made in haico itself.
    #[arg(long, value_name = "SQL")]
    prepare: Option<String>,
    /// PostgreSQL only: give connections back to sqlx's pool after each call, which pings
    /// each one (the server before it lent connections itself), instead of keeping them.
    #[arg(long)]
    pg_release_ping: bool,
    /// Random seed (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
}

/// Where the calls go.
#[derive(Clone)]
enum Target {
    Sqlx(drive_sqlx::Db),
    Sync(drive_sync::SyncDb),
}

impl Target {
    async fn call(&self, call: Call) -> Result<Learned> {
        let write = ops::writes(call.op);
        match self {
            Target::Sqlx(db) => {
                let mut call = call;
                // A write begins and takes the thread in one round trip, as the server does.
                let thread = write.then(|| call.thread.clone());
                db.transaction_on(thread.as_deref(), write, async |tx, turn| {
                    call.turn = turn;
                    ops::run(tx, &mut call).await
                })
                .await
            }
            Target::Sync(db) => {
                db.run(write, move |conn| {
                    let mut call = call;
                    futures_lite_block_on(ops::run(&mut drive_sync::SyncTx(conn), &mut call))
                })
                .await
            }
        }
    }
}

/// Runs a future that never waits (the synchronous driver's) to completion on this thread.
fn futures_lite_block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// What the callers share about each thread.
struct LoadThread {
    id: String,
    preferences: AtomicI64,
    todos: AtomicI64,
    artifact: AtomicI64,
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
        let scratch = Scratch::create(&args).await?;
        let outcome = run(&args, &scratch).await;
        scratch.drop_database(&args).await;
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

/// The scratch database: a temporary SQLite file or a fresh PostgreSQL database.
struct Scratch {
    url: String,
    _dir: Option<TempDir>,
    postgres_name: Option<String>,
}

/// A directory removed again on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Scratch {
    async fn create(args: &Args) -> Result<Self> {
        let tag = format!("{}_{}", std::process::id(), fastrand::u32(..));
        if args.engine == Engine::Postgres {
            let name = format!("haico_limit_{tag}");
            let admin = sqlx::PgPool::connect(&args.postgres)
                .await
                .with_context(|| format!("connecting to {}", args.postgres))?;
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&admin)
                .await?;
            admin.close().await;
            let base = args
                .postgres
                .rsplit_once('/')
                .map_or(args.postgres.as_str(), |(base, _)| base);
            return Ok(Self {
                url: format!("{base}/{name}"),
                _dir: None,
                postgres_name: Some(name),
            });
        }
        let dir = std::env::temp_dir().join(format!("haico-limit-{tag}"));
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            url: format!("sqlite:{}", dir.join("limit.db").display()),
            _dir: Some(TempDir(dir)),
            postgres_name: None,
        })
    }

    async fn drop_database(&self, args: &Args) {
        if let Some(name) = &self.postgres_name
            && let Ok(admin) = sqlx::PgPool::connect(&args.postgres).await
        {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&admin)
                .await;
            admin.close().await;
        }
    }
}

async fn run(args: &Args, scratch: &Scratch) -> Result<serde_json::Value> {
    // The schema comes from haico's migrations, through sqlx, for every engine.
    let sqlx_db = drive_sqlx::Db::open(&scratch.url, args.pg_release_ping).await?;
    if let Some(sql) = &args.prepare {
        sqlx_db.execute(sql).await?;
    }
    let target = match args.engine {
        Engine::SqliteSync => {
            sqlx_db.close().await;
            let path = scratch.url.trim_start_matches("sqlite:").into();
            Target::Sync(drive_sync::SyncDb::open(
                path,
                args.readers,
                args.group,
                args.checkpoint_thread,
            )?)
        }
        _ => Target::Sqlx(sqlx_db),
    };
    let threads: Arc<Vec<LoadThread>> = Arc::new(
        (0..args.threads)
            .map(|i| LoadThread {
                id: format!("load-{i:02}"),
                preferences: AtomicI64::new(0),
                todos: AtomicI64::new(0),
                artifact: AtomicI64::new(0),
            })
            .collect(),
    );
    let setup = Instant::now();
    seed(&target, &threads).await?;
    let setup = setup.elapsed();

    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let deadline = measure_from + Duration::from_secs_f64(args.duration);
    let cpu_before = Arc::new(std::sync::Mutex::new(None));
    let mut tasks = Vec::new();
    for client in 0..args.clients {
        let target = target.clone();
        let threads = Arc::clone(&threads);
        let cpu_before = Arc::clone(&cpu_before);
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
                    && let Ok(mut before) = cpu_before.lock()
                    && before.is_none()
                {
                    *before = Some((cpu::sample(None)?, Instant::now()));
                }
                seq += 1;
                let thread = &threads[rng.usize(..threads.len())];
                let op = workload::pick(&mut rng);
                let artifact = thread.artifact.load(Ordering::Relaxed);
                let call = Call {
                    op,
                    thread: thread.id.clone(),
                    seq: seq * 1000 + client as u64,
                    rng: rng.fork(),
                    preferences: thread.preferences.load(Ordering::Relaxed),
                    todos: thread.todos.load(Ordering::Relaxed),
                    artifact: (artifact > 0).then(|| rng.i64(1..=artifact)),
                    turn: None,
                };
                let began = Instant::now();
                let outcome = target.call(call).await;
                let took = began.elapsed();
                if began >= measure_from {
                    stats.record(op, took, outcome.as_ref().err())?;
                }
                if let Ok(learned) = outcome {
                    remember(thread, learned);
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
    let (cpu_before, _) = cpu_before
        .lock()
        .ok()
        .and_then(|b| *b)
        .context("the run never reached its measured part")?;
    let used = cpu_after.since(&cpu_before);
    let calls = total.all.len();
    let secs = wall.as_secs_f64().max(1e-9);
    let ms = |q: f64| total.all.value_at_quantile(q) as f64 / 1000.0;
    Ok(json!({
        "engine": args.engine.to_possible_value().map(|v| v.get_name().to_string()),
        "clients": args.clients,
        "threads": args.threads,
        "workers": args.workers,
        "readers": args.readers,
        "group": args.group,
        "checkpoint_thread": args.checkpoint_thread,
        "setup_s": setup.as_secs_f64(),
        "wall_s": secs,
        "total_calls": calls,
        "calls_per_sec": calls as f64 / secs,
        "latency_ms": {"p50": ms(0.5), "p90": ms(0.9), "p99": ms(0.99), "max": total.all.max() as f64 / 1000.0},
        "failures": total.failures,
        "failure_samples": total.samples,
        "ops": Op::ALL.iter().map(|op| (op.tool().to_string(), json!(total.per_op[op.index()]))).collect::<serde_json::Map<_, _>>(),
        "process_cpu": {
            "share_of_wall": used.total() / secs,
            "cpu_us_per_call": if calls > 0 { used.total() * 1e6 / calls as f64 } else { 0.0 },
        },
    }))
}

fn remember(thread: &LoadThread, learned: Learned) {
    if let Some(held) = learned.preferences {
        thread.preferences.store(held, Ordering::Relaxed);
    }
    if let Some(held) = learned.todos {
        thread.todos.store(held, Ordering::Relaxed);
    }
    if let Some(id) = learned.artifact {
        thread.artifact.fetch_max(id, Ordering::Relaxed);
    }
}

/// Gives every thread what `haico-load`'s setup gives it: an objective, a document, a plan of
/// a few steps, three preferences and a chart.
async fn seed(target: &Target, threads: &[LoadThread]) -> Result<()> {
    let plan = [
        Op::SetObjective,
        Op::UpdateDocument,
        Op::AddTodos,
        Op::AddTodos,
        Op::AddTodos,
        Op::AddPreferences,
        Op::AddPreferences,
        Op::AddPreferences,
        Op::ChartGenerator,
    ];
    let mut rng = fastrand::Rng::with_seed(7);
    for thread in threads {
        let id = thread.id.clone();
        let create = async |tx: &mut drive_sqlx::Tx<'_>| {
            ops::create_thread(tx, &id).await?;
            Ok(Learned::default())
        };
        match target {
            Target::Sqlx(db) => {
                db.transaction(true, create).await?;
            }
            Target::Sync(db) => {
                let id = id.clone();
                db.run(true, move |conn| {
                    futures_lite_block_on(ops::create_thread(&mut drive_sync::SyncTx(conn), &id))?;
                    Ok(Learned::default())
                })
                .await?;
            }
        }
        for (i, op) in plan.iter().enumerate() {
            let call = Call {
                op: *op,
                thread: id.clone(),
                seq: i as u64,
                rng: rng.fork(),
                preferences: thread.preferences.load(Ordering::Relaxed),
                todos: thread.todos.load(Ordering::Relaxed),
                artifact: None,
                turn: None,
            };
            let learned = target.call(call).await?;
            remember(thread, learned);
        }
    }
    Ok(())
}

/// Latencies and failures.
struct Stats {
    all: Histogram<u64>,
    per_op: Vec<u64>,
    failures: u64,
    samples: Vec<String>,
}

impl Stats {
    fn new() -> Result<Self> {
        Ok(Self {
            all: Histogram::new_with_bounds(1, 600_000_000, 3)?,
            per_op: vec![0; Op::ALL.len()],
            failures: 0,
            samples: Vec::new(),
        })
    }

    fn record(&mut self, op: Op, took: Duration, error: Option<&anyhow::Error>) -> Result<()> {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.all.record(micros.clamp(1, 600_000_000))?;
        self.per_op[op.index()] += 1;
        if let Some(error) = error {
            self.failures += 1;
            if self.samples.len() < 5 {
                self.samples.push(format!("{}: {error:#}", op.tool()));
            }
        }
        Ok(())
    }

    fn merge(&mut self, other: &Stats) -> Result<()> {
        self.all.add(&other.all)?;
        for (mine, theirs) in self.per_op.iter_mut().zip(&other.per_op) {
            *mine += theirs;
        }
        self.failures += other.failures;
        for sample in &other.samples {
            if self.samples.len() < 5 {
                self.samples.push(sample.clone());
            }
        }
        Ok(())
    }
}
