//! What a scenario cost: time, tool calls and the model's tokens, per scenario and summed or
//! taken as medians over a run.
//!
//! Token counts come from the provider through the recorded turns; a provider that does not
//! report one leaves it `None`, and the reports print "n/a" rather than a made-up zero.

use serde::{Deserialize, Serialize};

use haico_store::StoredTurn;

/// The model's token use over some turns; every field `None` where the provider (or this
/// build) did not report it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenMeasures {
    /// Requests sent to the model.
    pub model_calls: Option<u64>,
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the provider served from its cache.
    pub cached_tokens: Option<u64>,
    /// Tokens the model wrote.
    pub completion_tokens: Option<u64>,
    /// Milliseconds from a turn's first request to its first streamed token (a median over
    /// turns, or over scenarios, once summed up).
    pub first_token_ms: Option<u64>,
}

impl TokenMeasures {
    /// The share of prompt tokens served from the cache, when both counts are known.
    pub fn cached_share(&self) -> Option<f64> {
        match (self.cached_tokens, self.prompt_tokens) {
            (Some(cached), Some(prompt)) if prompt > 0 => Some(ratio(cached, prompt)),
            _ => None,
        }
    }

    /// The counts of several turns (or scenarios) added up and their first-token times'
    /// median. A count is known only when every part reported it: a partial sum would pass
    /// for the whole.
    pub fn combine(parts: &[TokenMeasures]) -> TokenMeasures {
        let sum = |get: fn(&TokenMeasures) -> Option<u64>| -> Option<u64> {
            if parts.is_empty() {
                return None;
            }
            parts
                .iter()
                .map(get)
                .try_fold(0u64, |total, n| n.map(|n| total.saturating_add(n)))
        };
        TokenMeasures {
            model_calls: sum(|t| t.model_calls),
            prompt_tokens: sum(|t| t.prompt_tokens),
            cached_tokens: sum(|t| t.cached_tokens),
            completion_tokens: sum(|t| t.completion_tokens),
            first_token_ms: median_u64(parts.iter().filter_map(|t| t.first_token_ms)),
        }
    }
}

/// The token use of one recorded turn, from the usage its end recorded; its time to first
/// token is its first model call's (how long the person waited for anything to happen).
pub fn turn_tokens(turn: &StoredTurn) -> TokenMeasures {
    let Some(usage) = &turn.usage else {
        return TokenMeasures::default();
    };
    TokenMeasures {
        model_calls: Some(u64::from(usage.model_calls)),
        prompt_tokens: usage.prompt_tokens,
        cached_tokens: usage.cached_tokens,
        completion_tokens: usage.completion_tokens,
        first_token_ms: usage.calls.first().and_then(|call| call.first_token_ms),
    }
}

/// What a provider's prompt cache saved after each turn's first call, over `turns`: the
/// share of those calls' prompt tokens the model had to read anew (`None` when no such call
/// reported both counts), and their median time to first token (mostly that reading).
pub fn later_calls(turns: &[StoredTurn]) -> (Option<f64>, Option<u64>) {
    let later: Vec<_> = turns
        .iter()
        .filter_map(|turn| turn.usage.as_ref())
        .flat_map(|usage| usage.calls.iter().skip(1))
        .collect();
    let (mut read, mut whole) = (0u64, 0u64);
    for call in &later {
        if let (Some(prompt), Some(cached)) = (call.prompt_tokens, call.cached_tokens) {
            read = read.saturating_add(prompt.saturating_sub(cached));
            whole = whole.saturating_add(prompt);
        }
    }
    let share = (whole > 0).then(|| ratio(read, whole));
    (
        share,
        median_u64(later.iter().filter_map(|call| call.first_token_ms)),
    )
}

/// The measures of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measures {
    /// Turns run (one per message).
    pub turns: usize,
    /// Milliseconds from sending each message to its turn's end, summed over the turns.
    pub wall_ms: f64,
    /// Milliseconds inside tool calls, summed.
    pub tool_ms: f64,
    /// Wall time less tool time: the model's share (plus the agent's own small overhead of
    /// building prompts and recording steps).
    pub model_ms: f64,
    /// Tool calls made.
    pub tool_calls: usize,
    /// Tool calls whose envelope said `success: false`.
    pub failed_calls: usize,
    /// The model's token use.
    pub tokens: TokenMeasures,
    /// `tokens.cached_share()`, in the JSON for convenience.
    pub cached_share: Option<f64>,
    /// After each turn's first model call: the share of the prompt read anew (not from the
    /// provider's cache). What the prompt's layout is for: it should be small.
    pub later_uncached_share: Option<f64>,
    /// After each turn's first model call: the median time to first token, in milliseconds.
    pub later_first_token_ms: Option<u64>,
}

impl Measures {
    /// The measures of `turns`, whose wall times (one per turn, in order) the caller timed.
    pub fn of(turns: &[StoredTurn], wall_ms: &[f64]) -> Measures {
        let wall: f64 = wall_ms.iter().sum();
        let tool_ms: f64 = turns
            .iter()
            .flat_map(|turn| &turn.tool_calls)
            .map(|call| call.duration_ms)
            .sum();
        let per_turn: Vec<TokenMeasures> = turns.iter().map(turn_tokens).collect();
        let tokens = TokenMeasures::combine(&per_turn);
        let (later_uncached_share, later_first_token_ms) = later_calls(turns);
        Measures {
            later_uncached_share,
            later_first_token_ms,
            turns: turns.len(),
            wall_ms: round_ms(wall),
            tool_ms: round_ms(tool_ms),
            model_ms: round_ms((wall - tool_ms).max(0.0)),
            tool_calls: turns.iter().map(|turn| turn.tool_calls.len()).sum(),
            failed_calls: turns
                .iter()
                .flat_map(|turn| &turn.tool_calls)
                .filter(|call| !call.success)
                .count(),
            cached_share: tokens.cached_share(),
            tokens,
        }
    }
}

/// Over all scenarios of a run: sums, and medians of the per-scenario values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Every scenario's measures added up (token counts only when all reported them).
    pub sum: Measures,
    /// The median scenario, measure by measure (token medians over the scenarios that
    /// reported them).
    pub median: Medians,
}

/// Per-scenario medians.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Medians {
    /// Wall time of a scenario.
    pub wall_ms: Option<f64>,
    /// Model time of a scenario.
    pub model_ms: Option<f64>,
    /// Tool calls of a scenario.
    pub tool_calls: Option<f64>,
    /// Failed calls of a scenario.
    pub failed_calls: Option<f64>,
    /// Model calls of a scenario.
    pub model_calls: Option<f64>,
    /// Prompt tokens of a scenario.
    pub prompt_tokens: Option<f64>,
    /// Completion tokens of a scenario.
    pub completion_tokens: Option<f64>,
    /// Cached share of a scenario's prompt tokens.
    pub cached_share: Option<f64>,
    /// Time to first token of a scenario.
    pub first_token_ms: Option<u64>,
}

impl Totals {
    /// The totals of the scenarios measured `each`.
    pub fn of(each: &[&Measures]) -> Totals {
        let tokens: Vec<TokenMeasures> = each.iter().map(|m| m.tokens).collect();
        let summed_tokens = TokenMeasures::combine(&tokens);
        let sum = Measures {
            turns: each.iter().map(|m| m.turns).sum(),
            wall_ms: round_ms(each.iter().map(|m| m.wall_ms).sum()),
            tool_ms: round_ms(each.iter().map(|m| m.tool_ms).sum()),
            model_ms: round_ms(each.iter().map(|m| m.model_ms).sum()),
            tool_calls: each.iter().map(|m| m.tool_calls).sum(),
            failed_calls: each.iter().map(|m| m.failed_calls).sum(),
            cached_share: summed_tokens.cached_share(),
            tokens: summed_tokens,
            later_uncached_share: median(each.iter().filter_map(|m| m.later_uncached_share)),
            later_first_token_ms: median_u64(each.iter().filter_map(|m| m.later_first_token_ms)),
        };
        let count = |n: usize| u32::try_from(n).map(f64::from).unwrap_or(f64::MAX);
        let known = |get: fn(&TokenMeasures) -> Option<u64>| {
            median(each.iter().filter_map(|m| get(&m.tokens)).map(to_f64))
        };
        let median = Medians {
            wall_ms: median(each.iter().map(|m| m.wall_ms)),
            model_ms: median(each.iter().map(|m| m.model_ms)),
            tool_calls: median(each.iter().map(|m| count(m.tool_calls))),
            failed_calls: median(each.iter().map(|m| count(m.failed_calls))),
            model_calls: known(|t| t.model_calls),
            prompt_tokens: known(|t| t.prompt_tokens),
            completion_tokens: known(|t| t.completion_tokens),
            cached_share: median(each.iter().filter_map(|m| m.cached_share)),
            first_token_ms: median_u64(each.iter().filter_map(|m| m.tokens.first_token_ms)),
        };
        Totals { sum, median }
    }
}

/// Milliseconds to a tenth: finer would be noise in the report.
fn round_ms(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// `part / whole` as a float (both far below 2^53 in practice).
fn ratio(part: u64, whole: u64) -> f64 {
    to_f64(part) / to_f64(whole)
}

/// A count as a float; counts here never come near 2^53.
fn to_f64(n: u64) -> f64 {
    n as f64
}

/// The median, or `None` for no values.
fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    let middle = values.get(mid).copied()?;
    if values.len() % 2 == 1 {
        Some(middle)
    } else {
        values.get(mid - 1).map(|low| (low + middle) / 2.0)
    }
}

/// The median of whole numbers, rounded down between two middles.
fn median_u64(values: impl Iterator<Item = u64>) -> Option<u64> {
    let mut values: Vec<u64> = values.collect();
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let mid = values.len() / 2;
    let middle = values.get(mid).copied()?;
    if values.len() % 2 == 1 {
        Some(middle)
    } else {
        values.get(mid - 1).map(|low| low + (middle - low) / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), Some(2.5));
        assert_eq!(median(std::iter::empty()), None);
        assert_eq!(median_u64([10, 20].into_iter()), Some(15));
    }

    #[test]
    fn later_calls_measure_what_the_cache_saved_after_each_turns_first_call() {
        use haico_store::{usage::CallUsage, usage::TurnUsage};
        let call = |prompt, cached, ttft| CallUsage {
            prompt_tokens: Some(prompt),
            cached_tokens: Some(cached),
            completion_tokens: Some(10),
            first_token_ms: Some(ttft),
            duration_ms: Some(ttft + 100),
        };
        let mut usage = TurnUsage::default();
        for c in [
            call(5000, 0, 90_000),
            call(5200, 5000, 4_000),
            call(5400, 5100, 6_000),
        ] {
            usage.add(c);
        }
        let turn = StoredTurn {
            turn_index: 1,
            status: "completed".into(),
            error: None,
            started_at: chrono::Utc::now(),
            finished_at: None,
            messages: Vec::new(),
            tool_calls: Vec::new(),
            usage: Some(usage),
        };
        let (share, ttft) = later_calls(std::slice::from_ref(&turn));
        // (200 + 300) read anew of 10,600 prompt tokens in the second and third calls.
        assert!(
            share.is_some_and(|s| (s - 500.0 / 10_600.0).abs() < 1e-9),
            "{share:?}"
        );
        assert_eq!(ttft, Some(5_000));
        assert_eq!(turn_tokens(&turn).first_token_ms, Some(90_000));
        assert_eq!(turn_tokens(&turn).model_calls, Some(3));
    }

    #[test]
    fn a_count_is_known_only_when_every_part_reported_it() {
        let reported = TokenMeasures {
            model_calls: Some(2),
            prompt_tokens: Some(1000),
            cached_tokens: Some(800),
            completion_tokens: Some(50),
            first_token_ms: Some(300),
        };
        let silent = TokenMeasures {
            cached_tokens: None,
            first_token_ms: None,
            ..reported
        };
        let both = TokenMeasures::combine(&[reported, silent]);
        assert_eq!(both.prompt_tokens, Some(2000));
        assert_eq!(both.cached_tokens, None);
        assert_eq!(both.cached_share(), None);
        assert_eq!(both.first_token_ms, Some(300));
        assert_eq!(reported.cached_share(), Some(0.8));
        assert_eq!(TokenMeasures::combine(&[]), TokenMeasures::default());
    }
}
