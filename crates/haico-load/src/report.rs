//! Counting and printing: latency histograms (microseconds, 3 significant digits), per-op
//! counts, failures, CPU shares.

use std::{fmt::Write as _, time::Duration};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde_json::{Value, json};

use crate::{cpu::CpuTime, workload::Op};

/// Failure examples kept per client (and printed in total).
const FAILURE_SAMPLES: usize = 10;

/// Largest latency a histogram tracks: 10 minutes, in microseconds.
const MAX_MICROS: u64 = 600_000_000;

fn histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).context("creating a latency histogram")
}

/// One op's numbers.
struct OpStats {
    latency: Histogram<u64>,
    failures: u64,
}

/// What one client (or, merged, all of them) measured.
pub struct ClientStats {
    all: Histogram<u64>,
    ops: Vec<OpStats>,
    failures: u64,
    transport_errors: u64,
    samples: Vec<String>,
}

impl ClientStats {
    /// Empty stats.
    pub fn new() -> Result<Self> {
        let mut ops = Vec::with_capacity(Op::ALL.len());
        for _ in Op::ALL {
            ops.push(OpStats {
                latency: histogram()?,
                failures: 0,
            });
        }
        Ok(Self {
            all: histogram()?,
            ops,
            failures: 0,
            transport_errors: 0,
            samples: Vec::new(),
        })
    }

    /// Records one answered call.
    pub fn record(&mut self, op: Op, latency: Duration, ok: bool) -> Result<()> {
        let micros = u64::try_from(latency.as_micros())
            .unwrap_or(MAX_MICROS)
            .clamp(1, MAX_MICROS);
        self.all.record(micros).context("recording a latency")?;
        if let Some(stats) = self.ops.get_mut(op.index()) {
            stats
                .latency
                .record(micros)
                .context("recording a latency")?;
            if !ok {
                stats.failures += 1;
            }
        }
        if !ok {
            self.failures += 1;
        }
        Ok(())
    }

    /// Keeps an example of a failed answer.
    pub fn sample_failure(&mut self, op: Op, thread: &str, status: u16, body: &str) {
        if self.samples.len() < FAILURE_SAMPLES {
            self.samples
                .push(format!("{} on {thread}: HTTP {status} {body}", op.tool()));
        }
    }

    /// Records a call that got no answer (connection error).
    pub fn record_transport(&mut self, op: Op, thread: &str, error: &str) {
        self.transport_errors += 1;
        self.failures += 1;
        if let Some(stats) = self.ops.get_mut(op.index()) {
            stats.failures += 1;
        }
        if self.samples.len() < FAILURE_SAMPLES {
            self.samples
                .push(format!("{} on {thread}: no answer: {error}", op.tool()));
        }
    }

    /// Adds `other` into these stats.
    pub fn merge(&mut self, other: &ClientStats) -> Result<()> {
        self.all.add(&other.all).context("merging histograms")?;
        for (mine, theirs) in self.ops.iter_mut().zip(&other.ops) {
            mine.latency
                .add(&theirs.latency)
                .context("merging histograms")?;
            mine.failures += theirs.failures;
        }
        self.failures += other.failures;
        self.transport_errors += other.transport_errors;
        for sample in &other.samples {
            if self.samples.len() < FAILURE_SAMPLES {
                self.samples.push(sample.clone());
            }
        }
        Ok(())
    }

    /// Calls answered or attempted in the measured window.
    pub fn total(&self) -> u64 {
        self.all.len() + self.transport_errors
    }
}

fn ms(histogram: &Histogram<u64>, quantile: f64) -> f64 {
    if histogram.is_empty() {
        return 0.0;
    }
    histogram.value_at_quantile(quantile) as f64 / 1000.0
}

/// The whole run's results.
pub struct Report {
    pub url: String,
    pub clients: usize,
    pub threads: usize,
    pub workers: usize,
    pub warmup: f64,
    pub setup_time: Duration,
    pub wall: Duration,
    pub stats: ClientStats,
    pub client_errors: Vec<String>,
    pub generator_cpu: CpuTime,
    pub server_cpu: Option<CpuTime>,
    /// The server processes measured (one per replica), summed into `server_cpu`.
    pub server_pids: Vec<u32>,
    /// The database server's children's CPU time, with `--database-pid`.
    pub database_cpu: Option<CpuTime>,
    /// The cross-replica lag probe's results, with `--lag-probe`.
    pub lag: Option<crate::lag::Lag>,
}

impl Report {
    /// Failed calls plus clients that died.
    pub fn failures(&self) -> u64 {
        self.stats.failures + self.client_errors.len() as u64
    }

    fn wall_secs(&self) -> f64 {
        self.wall.as_secs_f64().max(1e-9)
    }

    fn calls_per_sec(&self) -> f64 {
        self.stats.total() as f64 / self.wall_secs()
    }

    /// Machine-readable results.
    pub fn to_json(&self) -> Value {
        let all = &self.stats.all;
        let ops: serde_json::Map<String, Value> = Op::ALL
            .iter()
            .zip(&self.stats.ops)
            .map(|(op, stats)| {
                (
                    op.tool().to_string(),
                    json!({
                        "calls": stats.latency.len(),
                        "failures": stats.failures,
                        "p50_ms": ms(&stats.latency, 0.5),
                        "p99_ms": ms(&stats.latency, 0.99),
                        "max_ms": stats.latency.max() as f64 / 1000.0,
                    }),
                )
            })
            .collect();
        let wall = self.wall_secs();
        let cpu = |cpu: &CpuTime| {
            json!({
                "user_s": cpu.user,
                "sys_s": cpu.system,
                "total_s": cpu.total(),
                "share_of_wall": cpu.total() / wall,
                "cpu_us_per_call": if self.stats.total() > 0 {
                    cpu.total() * 1e6 / self.stats.total() as f64
                } else {
                    0.0
                },
            })
        };
        json!({
            "url": self.url,
            "clients": self.clients,
            "threads": self.threads,
            "generator_workers": self.workers,
            "warmup_s": self.warmup,
            "setup_s": self.setup_time.as_secs_f64(),
            "wall_s": wall,
            "total_calls": self.stats.total(),
            "calls_per_sec": self.calls_per_sec(),
            "latency_ms": {
                "p50": ms(all, 0.5),
                "p90": ms(all, 0.9),
                "p99": ms(all, 0.99),
                "max": all.max() as f64 / 1000.0,
                "mean": all.mean() / 1000.0,
            },
            "failures": self.stats.failures,
            "transport_errors": self.stats.transport_errors,
            "client_errors": self.client_errors,
            "failure_samples": self.stats.samples,
            "ops": ops,
            "generator_cpu": cpu(&self.generator_cpu),
            "server_pids": self.server_pids,
            "server_cpu": self.server_cpu.as_ref().map(cpu),
            "database_cpu": self.database_cpu.as_ref().map(cpu),
            "lag_ms": self.lag.as_ref().map(|lag| serde_json::json!({
                "samples": lag.samples.len(),
                "missed": lag.missed,
                "p50": lag.quantile_ms(0.5),
                "p99": lag.quantile_ms(0.99),
                "max": lag.quantile_ms(1.0),
            })),
        })
    }

    /// Human-readable results.
    pub fn to_text(&self) -> String {
        let all = &self.stats.all;
        let wall = self.wall_secs();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "haico-load: {} clients on {} threads against {} ({} generator worker{}), setup {:.2} s, \
             warm-up {:.1} s",
            self.clients,
            self.threads,
            self.url,
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.setup_time.as_secs_f64(),
            self.warmup
        );
        let _ = writeln!(out, "measured wall time   {wall:.2} s");
        let _ = writeln!(out, "total calls          {}", self.stats.total());
        let _ = writeln!(out, "calls/s              {:.0}", self.calls_per_sec());
        let _ = writeln!(
            out,
            "latency ms           p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}  (mean {:.2})",
            ms(all, 0.5),
            ms(all, 0.9),
            ms(all, 0.99),
            all.max() as f64 / 1000.0,
            all.mean() / 1000.0
        );
        let _ = writeln!(
            out,
            "failures             {} ({} without an answer)",
            self.stats.failures, self.stats.transport_errors
        );
        for sample in &self.stats.samples {
            let _ = writeln!(out, "  failure: {sample}");
        }
        for error in &self.client_errors {
            let _ = writeln!(out, "  client error: {error}");
        }
        let cpu_line = |label: &str, cpu: &CpuTime| {
            format!(
                "{label:<21}user {:.2} s + sys {:.2} s = {:.2} s over {wall:.2} s wall = {:.0}% of one \
                 core, {:.0} µs CPU per call\n",
                cpu.user,
                cpu.system,
                cpu.total(),
                100.0 * cpu.total() / wall,
                if self.stats.total() > 0 {
                    cpu.total() * 1e6 / self.stats.total() as f64
                } else {
                    0.0
                }
            )
        };
        out.push_str(&cpu_line("generator CPU", &self.generator_cpu));
        match &self.server_cpu {
            Some(cpu) if self.server_pids.len() == 1 => out.push_str(&cpu_line(
                &format!("server CPU (pid {}) ", self.server_pids[0]),
                cpu,
            )),
            Some(cpu) => out.push_str(&cpu_line(
                &format!("server CPU ({} pids) ", self.server_pids.len()),
                cpu,
            )),
            None => out.push_str("server CPU           (pass --server-pid to measure)\n"),
        }
        if let Some(cpu) = &self.database_cpu {
            out.push_str(&cpu_line("database CPU", cpu));
        }
        if let Some(lag) = &self.lag {
            let _ = writeln!(
                out,
                "cross-replica lag    p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  ({} probes, {} missed)",
                lag.quantile_ms(0.5).unwrap_or(f64::NAN),
                lag.quantile_ms(0.99).unwrap_or(f64::NAN),
                lag.quantile_ms(1.0).unwrap_or(f64::NAN),
                lag.samples.len(),
                lag.missed
            );
        }
        let _ = writeln!(
            out,
            "{:<20} {:>8} {:>6} {:>8} {:>8} {:>8}",
            "op", "calls", "fail", "p50 ms", "p99 ms", "max ms"
        );
        for (op, stats) in Op::ALL.iter().zip(&self.stats.ops) {
            let _ = writeln!(
                out,
                "{:<20} {:>8} {:>6} {:>8.2} {:>8.2} {:>8.2}",
                op.tool(),
                stats.latency.len(),
                stats.failures,
                ms(&stats.latency, 0.5),
                ms(&stats.latency, 0.99),
                stats.latency.max() as f64 / 1000.0
            );
        }
        out
    }
}
