//! Latencies, calls per op and failures, per caller and merged at the end.

use std::time::Duration;

use anyhow::Result;
use haico_core::workspace::WorkspaceError;
use haico_load::workload::Op;
use hdrhistogram::Histogram;

/// Samples kept of each kind of failure.
const SAMPLES: usize = 5;

/// Latencies and failures of the measured calls.
pub struct Stats {
    pub all: Histogram<u64>,
    pub per_op: Vec<u64>,
    /// Failed calls, as `haico-load` counts them (the call's envelope says `success: false`).
    pub failures: u64,
    /// Of those, per op, the calls the workspace refused by one of its rules: what the tool
    /// answers the model with a failure envelope (an out-of-range parent, a rewrite that would
    /// drop most of the document), as the server does for the same arguments.
    pub refused: Vec<u64>,
    /// Failures that are not refusals (the database failed, a thread went missing).
    pub samples: Vec<String>,
    /// Refusals.
    pub refusal_samples: Vec<String>,
}

/// Whether `error` is a refusal by a rule of the workspace rather than a failure of the call.
fn refusal(error: &WorkspaceError) -> bool {
    !matches!(
        error,
        WorkspaceError::Store(_) | WorkspaceError::UnknownThread(_)
    )
}

fn keep(samples: &mut Vec<String>, sample: String) {
    if samples.len() < SAMPLES {
        samples.push(sample);
    }
}

impl Stats {
    /// Nothing recorded yet.
    pub fn new() -> Result<Self> {
        Ok(Self {
            all: Histogram::new_with_bounds(1, 600_000_000, 3)?,
            per_op: vec![0; Op::ALL.len()],
            failures: 0,
            refused: vec![0; Op::ALL.len()],
            samples: Vec::new(),
            refusal_samples: Vec::new(),
        })
    }

    /// Records one measured call of `op`, which took `took` and failed with `error`, if it did.
    pub fn record(&mut self, op: Op, took: Duration, error: Option<&WorkspaceError>) -> Result<()> {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.all.record(micros.clamp(1, 600_000_000))?;
        self.per_op[op.index()] += 1;
        if let Some(error) = error {
            self.failures += 1;
            let sample = format!("{}: {error}", op.tool());
            if refusal(error) {
                self.refused[op.index()] += 1;
                keep(&mut self.refusal_samples, sample);
            } else {
                keep(&mut self.samples, sample);
            }
        }
        Ok(())
    }

    /// Failures that are not refusals.
    pub fn errors(&self) -> u64 {
        self.failures - self.refused.iter().sum::<u64>()
    }

    /// Adds another caller's records.
    pub fn merge(&mut self, other: &Stats) -> Result<()> {
        self.all.add(&other.all)?;
        for (mine, theirs) in self.per_op.iter_mut().zip(&other.per_op) {
            *mine += theirs;
        }
        for (mine, theirs) in self.refused.iter_mut().zip(&other.refused) {
            *mine += theirs;
        }
        self.failures += other.failures;
        for sample in &other.samples {
            keep(&mut self.samples, sample.clone());
        }
        for sample in &other.refusal_samples {
            keep(&mut self.refusal_samples, sample.clone());
        }
        Ok(())
    }
}
