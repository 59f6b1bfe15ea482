//! `haico-load`: a mixed tool-call workload against a running `haico serve`.
//!
//! Setup creates `--threads` threads (`load-00`, `load-01`, …) and seeds each with an
//! objective, a document, a small plan, preferences and a chart. Then `--clients` concurrent
//! clients, each on its own keep-alive connection, call random tools on random threads through
//! `POST /api/threads/{id}/tools/{tool}` until the duration (or `--requests`) is used up. Every
//! answer must be `200` with `"success": true`; anything else is counted as a failure.
//!
//! It reports calls/s, latency percentiles, per-op counts, failures, its own CPU time as a
//! share of wall time and, with `--server-pid`, the server's CPU time over the measured run.

mod client;
mod lag;
mod report;

use haico_load::{cpu, workload};

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use clap::Parser;
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use client::{Conn, Target};
use report::{ClientStats, Report};
use workload::{LoadThread, Op};

/// Mixed tool-call load against a running haico server (loopback targets only).
#[derive(Debug, Parser)]
#[command(name = "haico-load", version, about)]
struct Args {
    /// Server base URL, `http://HOST:PORT`; HOST must be a loopback address. Several
    /// (comma-separated replicas of one database): calls go round-robin over them, each
    /// client's consecutive calls to different replicas, like a load balancer without
    /// stickiness.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// Concurrent clients, each with its own keep-alive connection.
    #[arg(long, short = 'c', default_value_t = 32)]
    clients: usize,
    /// Measured run time in seconds (after the warm-up).
    #[arg(long, short = 'd', default_value_t = 20.0)]
    duration: f64,
    /// Warm-up seconds before measuring: calls run but are not counted.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Stop after this many measured calls, even if time is left.
    #[arg(long, short = 'n')]
    requests: Option<u64>,
    /// Number of threads to create and spread the calls over.
    #[arg(long, default_value_t = 50)]
    threads: usize,
    /// Thread id prefix: ids are `PREFIX-00`, `PREFIX-01`, …
    #[arg(long, default_value = "load")]
    prefix: String,
    /// Tokio worker threads of the generator itself.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// PID of the server (comma-separated for replicas), to report its CPU time over the
    /// measured run.
    #[arg(long, value_delimiter = ',')]
    server_pid: Vec<u32>,
    /// PID of the database server's main process (PostgreSQL's postmaster), to report the
    /// CPU time of its children (the backends serving the server's connections, the WAL
    /// writer, …) over the measured run: on a machine shared with the database, that is what
    /// bounds calls/s.
    #[arg(long)]
    database_pid: Option<u32>,
    /// Also measure how long a write answered by the first `--url` takes to reach an events
    /// stream on the last one (one probe write every 100 ms on a thread of its own).
    #[arg(long)]
    lag_probe: bool,
    /// After the run, write every load thread's workspace (timestamps left out) as JSON to
    /// this file, as read through each `--url`; the run fails if the replicas disagree.
    #[arg(long, value_name = "FILE")]
    state_out: Option<std::path::PathBuf>,
    /// Random seed (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Bearer token, when the server requires one.
    #[arg(long, env = "HAICO_API_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print the results as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the JSON results to this file (the text report still goes to stdout).
    #[arg(long, value_name = "FILE")]
    json_out: Option<std::path::PathBuf>,
}

/// Longest run the generator accepts, so it always stops by itself.
const MAX_SECONDS: f64 = 3600.0;

fn main() -> Result<()> {
    let args = Args::parse();
    check(&args)?;
    let runtime = if args.workers <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.workers)
            .enable_all()
            .build()
    }
    .context("starting the async runtime")?;
    let report = runtime.block_on(run(&args))?;
    if let Some(path) = &args.json_out {
        let text = serde_json::to_string_pretty(&report.to_json())?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        print!("{}", report.to_text());
    }
    if report.failures() > 0 {
        std::process::exit(2);
    }
    Ok(())
}

fn check(args: &Args) -> Result<()> {
    if args.clients == 0 || args.clients > 4096 {
        bail!("--clients must be between 1 and 4096");
    }
    if args.threads == 0 || args.threads > 1000 {
        bail!("--threads must be between 1 and 1000");
    }
    if !(args.duration > 0.0 && args.duration <= MAX_SECONDS) {
        bail!("--duration must be more than 0 and at most {MAX_SECONDS} seconds");
    }
    if !(args.warmup >= 0.0 && args.warmup <= MAX_SECONDS) {
        bail!("--warmup must be between 0 and {MAX_SECONDS} seconds");
    }
    if args.requests == Some(0) {
        bail!("--requests must be at least 1");
    }
    let valid_prefix = !args.prefix.is_empty()
        && args.prefix.len() <= 40
        && args
            .prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !valid_prefix {
        bail!("--prefix must be 1-40 characters of [A-Za-z0-9_-]");
    }
    Ok(())
}

/// What every client shares.
struct Shared {
    targets: Vec<Target>,
    threads: Vec<LoadThread>,
    measure_from: Instant,
    deadline: Instant,
    max_requests: Option<u64>,
    issued: AtomicU64,
    stop: AtomicBool,
}

async fn run(args: &Args) -> Result<Report> {
    let mut targets = Vec::new();
    for url in args.url.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        targets.push(Target::parse(url, args.token.as_deref()).await?);
    }
    let Some(target) = targets.first().cloned() else {
        bail!("--url names no server");
    };
    // A wrong PID is said now, not after the set-up and warm-up.
    if let Some(pid) = args.database_pid {
        cpu::database_children(pid)?;
    }
    let threads: Vec<LoadThread> = (0..args.threads)
        .map(|i| LoadThread::new(format!("{}-{i:02}", args.prefix)))
        .collect();
    let setup_started = Instant::now();
    setup(&target, &threads).await?;
    let setup_time = setup_started.elapsed();

    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let lag = if args.lag_probe {
        let writer = target.clone();
        let listener = targets.last().cloned().unwrap_or_else(|| target.clone());
        let thread = format!("{}-lag", args.prefix);
        let until = measure_from + Duration::from_secs_f64(args.duration);
        Some(tokio::spawn(lag::probe(writer, listener, thread, until)))
    } else {
        None
    };
    let shared = Arc::new(Shared {
        targets,
        threads,
        measure_from,
        deadline: measure_from + Duration::from_secs_f64(args.duration),
        max_requests: args.requests,
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });

    let mut handles = Vec::with_capacity(args.clients);
    for client in 0..args.clients {
        let shared = Arc::clone(&shared);
        let client_seed = seed
            .wrapping_add(client as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        handles.push(tokio::spawn(async move {
            client_loop(shared, client, client_seed).await
        }));
    }

    // CPU snapshots bracket the measured window.
    tokio::time::sleep_until(measure_from.into()).await;
    let own_before = cpu::sample(None)?;
    let server_before = servers_cpu(&args.server_pid)?;
    let database_before = args.database_pid.map(cpu::database_children).transpose()?;
    let window_start = Instant::now();

    let mut stats = ClientStats::new()?;
    let mut client_errors = Vec::new();
    for handle in handles {
        match handle.await {
            Ok(Ok(client)) => stats.merge(&client)?,
            Ok(Err(err)) => client_errors.push(format!("{err:#}")),
            Err(err) => client_errors.push(format!("client task failed: {err}")),
        }
    }
    let wall = window_start.elapsed();
    let own_after = cpu::sample(None)?;
    let server_after = servers_cpu(&args.server_pid)?;
    // The same processes as at the start (one that ended meanwhile is left out).
    let database_cpu = match (args.database_pid, database_before) {
        (Some(parent), Some(before)) => {
            let after = cpu::children(parent)?;
            let mut total = cpu::CpuTime::default();
            for (pid, then) in &before {
                if let Some((_, now)) = after.iter().find(|(p, _)| p == pid) {
                    let used = now.since(then);
                    total.user += used.user;
                    total.system += used.system;
                }
            }
            Some(total)
        }
        _ => None,
    };
    let lag = match lag {
        Some(task) => Some(
            task.await
                .context("the lag probe failed")?
                .context("the lag probe failed")?,
        ),
        None => None,
    };
    if let Some(path) = &args.state_out {
        let state = final_state(&shared.targets, &shared.threads).await?;
        std::fs::write(path, serde_json::to_string_pretty(&state)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if !client_errors.is_empty() && stats.total() == 0 {
        bail!("every client failed: {}", client_errors.join("; "));
    }

    Ok(Report {
        url: args.url.clone(),
        clients: args.clients,
        threads: args.threads,
        workers: args.workers,
        warmup: args.warmup,
        setup_time,
        wall,
        stats,
        client_errors,
        generator_cpu: own_after.since(&own_before),
        server_cpu: match (server_before, server_after) {
            (Some(before), Some(after)) => Some(after.since(&before)),
            _ => None,
        },
        server_pids: args.server_pid.clone(),
        database_cpu,
        lag,
    })
}

/// The summed CPU time of `pids`, or `None` when there are none.
fn servers_cpu(pids: &[u32]) -> Result<Option<cpu::CpuTime>> {
    if pids.is_empty() {
        return Ok(None);
    }
    let mut total = cpu::CpuTime::default();
    for &pid in pids {
        let sample = cpu::sample(Some(pid))?;
        total.user += sample.user;
        total.system += sample.system;
    }
    Ok(Some(total))
}

/// Every load thread's workspace without its timestamps, read through each target; fails if
/// two targets disagree.
async fn final_state(targets: &[Target], threads: &[LoadThread]) -> Result<Value> {
    let mut first: Option<Value> = None;
    for target in targets {
        let mut conn = Conn::connect(target).await?;
        let mut state = serde_json::Map::new();
        for thread in threads {
            let (status, body) = conn
                .send(
                    Method::GET,
                    &format!("/api/threads/{}/workspace", thread.id),
                    None,
                )
                .await?;
            if status != StatusCode::OK {
                bail!("reading {}: {status} {}", thread.id, snippet(&body));
            }
            let mut workspace: Value = serde_json::from_slice(&body)?;
            strip_times(&mut workspace);
            state.insert(thread.id.clone(), workspace);
        }
        let state = Value::Object(state);
        match &first {
            None => first = Some(state),
            Some(seen) if *seen == state => {}
            Some(_) => bail!("the replicas show different final states"),
        }
    }
    first.context("no target")
}

/// Removes the `…_at` fields (wall-clock times differ from run to run).
fn strip_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !key.ends_with("_at"));
            map.values_mut().for_each(strip_times);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_times),
        _ => {}
    }
}

/// Creates (or re-creates) every thread and seeds it through the tools.
async fn setup(target: &Target, threads: &[LoadThread]) -> Result<()> {
    let mut conn = Conn::connect(target)
        .await
        .context("is `haico serve` running at --url?")?;
    for (i, thread) in threads.iter().enumerate() {
        let create =
            serde_json::to_vec(&json!({"id": thread.id, "title": format!("Load thread {i}")}))?;
        let (status, body) = conn.post_json("/api/threads", create.clone()).await?;
        if status == StatusCode::CONFLICT {
            // Left over from an earlier run on the same database: start it afresh.
            let (status, body) = conn
                .send(Method::DELETE, &format!("/api/threads/{}", thread.id), None)
                .await?;
            if !status.is_success() {
                bail!(
                    "deleting old thread {}: {status} {}",
                    thread.id,
                    snippet(&body)
                );
            }
            let (status, body) = conn.post_json("/api/threads", create).await?;
            if status != StatusCode::CREATED {
                bail!("creating thread {}: {status} {}", thread.id, snippet(&body));
            }
        } else if status != StatusCode::CREATED {
            bail!("creating thread {}: {status} {}", thread.id, snippet(&body));
        }

        let seeds: [(Op, Value); 5] = [
            (
                Op::SetObjective,
                json!({"objective": "Plan a calm week by the sea"}),
            ),
            (
                Op::UpdateDocument,
                json!({"title": "Trip plan", "content": "# Trip plan\n\nTrains only, under budget.\n"}),
            ),
            (
                Op::AddTodos,
                json!({"steps": [
                    {"text": "Choose the town", "depth": 0},
                    {"text": "Compare three towns", "depth": 1},
                    {"text": "Book the trains", "depth": 0},
                    {"text": "Outbound", "depth": 1},
                    {"text": "Return", "depth": 1},
                    {"text": "Book a room", "depth": 0},
                    {"text": "Pack", "depth": 0},
                    {"text": "Buy sun cream", "depth": 1},
                ]}),
            ),
            (
                Op::AddPreferences,
                json!({"items": [
                    {"title": "Trains only", "kind": "hard"},
                    {"title": "Quiet places", "subtitle": "no party towns", "kind": "soft"},
                    {"title": "Under 1500 EUR", "kind": "hard"},
                ]}),
            ),
            (
                Op::ChartGenerator,
                json!({"chart_type": "bar", "title": "Budget", "data": {
                    "labels": ["Train", "Hotel", "Food"],
                    "series": [{"name": "EUR", "values": [180, 700, 300]}],
                }}),
            ),
        ];
        for (op, args) in seeds {
            let (status, body) = conn
                .post_json(thread.path(op), workload::body(op, args))
                .await?;
            let envelope: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if status != StatusCode::OK || envelope.get("success") != Some(&Value::Bool(true)) {
                bail!(
                    "seeding {} with {}: {status} {}",
                    thread.id,
                    op.tool(),
                    snippet(&body)
                );
            }
            thread.observe(op, &envelope);
        }
        // The plan and preference counts come from the summaries; re-read them to be sure.
        for op in [Op::ListTodos, Op::ListPreferences] {
            let (status, body) = conn
                .post_json(thread.path(op), workload::body(op, json!({})))
                .await?;
            let envelope: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if status != StatusCode::OK || envelope.get("success") != Some(&Value::Bool(true)) {
                bail!(
                    "seeding {} with {}: {status} {}",
                    thread.id,
                    op.tool(),
                    snippet(&body)
                );
            }
            thread.observe(op, &envelope);
        }
    }
    Ok(())
}

async fn client_loop(shared: Arc<Shared>, client: usize, seed: u64) -> Result<ClientStats> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut stats = ClientStats::new()?;
    let n = shared.targets.len();
    let mut conns: Vec<Option<Conn>> = Vec::with_capacity(n);
    for target in &shared.targets {
        conns.push(Some(Conn::connect(target).await?));
    }
    let mut seq: u64 = 0;
    loop {
        let now = Instant::now();
        if now >= shared.deadline || shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let measured = now >= shared.measure_from;
        if measured
            && let Some(max) = shared.max_requests
            && shared.issued.fetch_add(1, Ordering::Relaxed) >= max
        {
            shared.stop.store(true, Ordering::Relaxed);
            break;
        }
        seq += 1;
        let thread = &shared.threads[rng.usize(..shared.threads.len())];
        let (op, body) = thread.next_call(&mut rng, client, seq);
        let which = (client + seq as usize) % n;
        let conn = &mut conns[which];
        let current = match conn.as_mut() {
            Some(c) => c,
            None => conn.insert(Conn::connect(&shared.targets[which]).await?),
        };
        let started = Instant::now();
        let result = current.post_json(thread.path(op), body).await;
        let latency = started.elapsed();
        match result {
            Ok((status, bytes)) => {
                let envelope: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let ok =
                    status == StatusCode::OK && envelope.get("success") == Some(&Value::Bool(true));
                if ok {
                    thread.observe(op, &envelope);
                }
                if measured {
                    stats.record(op, latency, ok)?;
                    if !ok {
                        stats.sample_failure(op, &thread.id, status.as_u16(), &snippet(&bytes));
                    }
                }
            }
            Err(err) => {
                conns[which] = None;
                if measured {
                    stats.record_transport(op, &thread.id, &format!("{err:#}"));
                }
            }
        }
    }
    Ok(stats)
}

/// The start of a response body, for error messages.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        out.push('…');
    }
    out
}
