//! What a turn cost in model tokens and waiting time, as the provider reported it: the numbers
//! a person needs to see why a turn was slow or expensive, and a researcher to compare runs.
//!
//! Counts a provider did not report stay `None` (never a made-up zero), and a turn's sum is
//! `None` for a count only when no call of the turn reported it.

use serde::{Deserialize, Serialize};

/// One model call's token counts and timings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CallUsage {
    /// Every token of the prompt, cached or not.
    pub prompt_tokens: Option<u64>,
    /// Prompt tokens the provider took from its prompt cache instead of reading them again.
    pub cached_tokens: Option<u64>,
    /// Tokens the model wrote.
    pub completion_tokens: Option<u64>,
    /// Milliseconds from sending the request to the first piece of the answer: mostly the time
    /// the model spent reading the uncached part of the prompt.
    #[serde(default)]
    pub first_token_ms: Option<u64>,
    /// Milliseconds the whole call took.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

impl CallUsage {
    /// The counts of `other` where this one has none (a provider may report usage in pieces,
    /// e.g. the prompt at the start of a stream and the completion at its end).
    pub fn fill_from(&mut self, other: &CallUsage) {
        self.prompt_tokens = other.prompt_tokens.or(self.prompt_tokens);
        self.cached_tokens = other.cached_tokens.or(self.cached_tokens);
        self.completion_tokens = other.completion_tokens.or(self.completion_tokens);
        self.first_token_ms = other.first_token_ms.or(self.first_token_ms);
        self.duration_ms = other.duration_ms.or(self.duration_ms);
    }
}

/// A turn's model calls summed (`usage` of a turn in `GET …/messages` and of its `done` event).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TurnUsage {
    /// How many times the model was called.
    pub model_calls: u32,
    /// Prompt tokens over all calls.
    pub prompt_tokens: Option<u64>,
    /// Of those, the ones taken from the provider's prompt cache.
    pub cached_tokens: Option<u64>,
    /// Tokens the model wrote over all calls.
    pub completion_tokens: Option<u64>,
    /// Milliseconds before the model's answers started, over all calls: mostly the time it
    /// spent reading the uncached parts of its prompts. The first call's alone (how long the
    /// person waited for the agent's first word or step) is `calls[0].first_token_ms`.
    pub first_token_ms: Option<u64>,
    /// Milliseconds spent waiting for the model over all calls (the rest of a turn is tools).
    #[serde(default)]
    pub model_ms: Option<u64>,
    /// Each call, in order.
    #[serde(default)]
    pub calls: Vec<CallUsage>,
}

impl TurnUsage {
    /// Adds one call.
    pub fn add(&mut self, call: CallUsage) {
        self.model_calls = self.model_calls.saturating_add(1);
        self.prompt_tokens = sum(self.prompt_tokens, call.prompt_tokens);
        self.cached_tokens = sum(self.cached_tokens, call.cached_tokens);
        self.completion_tokens = sum(self.completion_tokens, call.completion_tokens);
        self.model_ms = sum(self.model_ms, call.duration_ms);
        self.first_token_ms = sum(self.first_token_ms, call.first_token_ms);
        self.calls.push(call);
    }

    /// The share of prompt tokens served from the cache, when both counts are known.
    pub fn cached_share(&self) -> Option<f64> {
        match (self.prompt_tokens, self.cached_tokens) {
            (Some(prompt), Some(cached)) if prompt > 0 => Some(cached as f64 / prompt as f64),
            _ => None,
        }
    }
}

fn sum(total: Option<u64>, more: Option<u64>) -> Option<u64> {
    match (total, more) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_what_was_reported_and_keeps_unknown_as_none() {
        let mut turn = TurnUsage::default();
        turn.add(CallUsage {
            prompt_tokens: Some(1000),
            cached_tokens: None,
            completion_tokens: Some(20),
            first_token_ms: Some(900),
            duration_ms: Some(1500),
        });
        turn.add(CallUsage {
            prompt_tokens: Some(1100),
            cached_tokens: Some(1000),
            completion_tokens: Some(30),
            first_token_ms: Some(100),
            duration_ms: Some(700),
        });
        assert_eq!(turn.model_calls, 2);
        assert_eq!(turn.prompt_tokens, Some(2100));
        assert_eq!(turn.cached_tokens, Some(1000));
        assert_eq!(turn.completion_tokens, Some(50));
        assert_eq!(turn.first_token_ms, Some(1000));
        assert_eq!(turn.model_ms, Some(2200));
        assert_eq!(turn.calls.len(), 2);
        assert!(
            turn.cached_share()
                .is_some_and(|s| (s - 1000.0 / 2100.0).abs() < 1e-9)
        );
        assert_eq!(TurnUsage::default().cached_share(), None);
    }
}
