//! The do-nothing baseline: what a scenario's checks say about an agent that answers every
//! message in plain text and changes nothing. It is judged beside every run, on the starting
//! workspace as the end state and one synthetic turn per message (completed, no tool call, a
//! text answer), so the report shows how much better than chatting a model did. A task check
//! should fail on it and a guard pass; `tests/integration/agent/eval.rs` holds the shipped
//! scenarios to that.

use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::{
    checks::{CheckOutcome, Observed},
    scenario::Scenario,
    tally::Counts,
    trace::{ModelCallTrace, TurnTrace},
};
use haico_store::{MessageRecord, StoredTurn, Workspace};

/// What the baseline answers to every message: words that name no target, so no
/// `answer_mentions` check is met by chance.
pub const ANSWER: &str = "OK.";

/// How the scenario's checks came out for an agent that does nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// Each check's outcome, in the file's order.
    pub checks: Vec<CheckOutcome>,
    /// Their pass counts.
    pub counts: Counts,
}

/// Judges `scenario`'s checks as if nothing had been done from `start` (the starting
/// workspace as written, which has no artifacts: scenario files cannot give any).
pub fn judge(
    scenario: &Scenario,
    start: &Workspace,
    max_steps: usize,
    offered_tools: &[&str],
) -> Baseline {
    let turns = turns(&scenario.messages);
    let traces = traces(&scenario.messages);
    let seen = Observed {
        start,
        end: start,
        artifacts: &[],
        turns: &turns,
        traces: Some(&traces),
        max_steps,
        offered_tools,
    };
    let checks: Vec<CheckOutcome> = scenario
        .checks
        .iter()
        .map(|check| check.evaluate(&seen))
        .collect();
    Baseline {
        counts: Counts::of(&checks),
        checks,
    }
}

/// One completed turn per message, answered with [`ANSWER`], without a tool call.
pub fn turns(messages: &[String]) -> Vec<StoredTurn> {
    let now = Utc::now();
    messages
        .iter()
        .zip(1i64..)
        .map(|(message, index)| StoredTurn {
            turn_index: index,
            status: "completed".into(),
            error: None,
            started_at: now,
            finished_at: Some(now),
            messages: vec![
                MessageRecord {
                    id: 2 * index - 1,
                    role: "user".into(),
                    content: message.clone(),
                    created_at: now,
                    by: None,
                },
                MessageRecord {
                    id: 2 * index,
                    role: "assistant".into(),
                    content: ANSWER.into(),
                    created_at: now,
                    by: None,
                },
            ],
            tool_calls: Vec::new(),
            usage: None,
        })
        .collect()
}

/// The turns' traces: one model call each, a text answer without tool calls.
fn traces(messages: &[String]) -> Vec<TurnTrace> {
    messages
        .iter()
        .enumerate()
        .map(|(i, message)| TurnTrace {
            turn: i + 1,
            message: message.clone(),
            status: "completed".into(),
            error: None,
            seconds: None,
            model_calls: vec![ModelCallTrace {
                call: 1,
                seconds: None,
                first_token_seconds: None,
                prompt_tokens: None,
                cached_tokens: None,
                completion_tokens: None,
                text: ANSWER.into(),
                text_chars: ANSWER.chars().count(),
                written_as_text: false,
                tool_calls: Vec::new(),
                stop_reason: Some("stop".into()),
                error: None,
            }],
            unmatched_steps: Vec::new(),
            answer: Some(ANSWER.into()),
        })
        .collect()
}
