//! The per-call trace of a scenario run: every model call (its timing, tokens, text, tool
//! calls and stop reason, as [`recorder`] saw it stream) joined with what the agent did with
//! each of its tool calls (the envelope stored with the turn, or "not run"). It is what a
//! person reads to see *why* a check failed, and what `ended_by_model` judges on.
//!
//! The join is by order: the loop runs a model answer's calls one after another, numbering
//! them within the turn, and stops part-way only at the step limit or when the turn ends. A
//! call the model wrote as text (a ```json block) is taken as a call by the loop; the
//! recorder reads the text the same way ([`crate::agent::text_calls`]) so it joins too.

pub mod markdown;
pub mod recorder;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use recorder::{CallLog, RecordedCall, traced};

use haico_store::{StoredToolCall, StoredTurn};

/// Longest argument text the JSON trace keeps per tool call.
const ARGUMENT_CHARS: usize = 4_000;

/// One turn: the person's message, each model call, and the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnTrace {
    /// Which message (from 1).
    pub turn: usize,
    /// The person's message.
    pub message: String,
    /// How the turn ended: completed, failed or cancelled.
    pub status: String,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// From sending the message to the turn's end, in seconds.
    pub seconds: Option<f64>,
    /// The model calls, in order.
    pub model_calls: Vec<ModelCallTrace>,
    /// Recorded tool calls that no model call accounts for (none when the join worked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched_steps: Vec<ToolCallTrace>,
    /// The answer the person got (the loop's own message when it ended the turn).
    pub answer: Option<String>,
}

/// One call of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCallTrace {
    /// Its number within the turn (from 1).
    pub call: usize,
    /// From the request to the end of the answer, in seconds.
    pub seconds: Option<f64>,
    /// From the request to the first text or tool call, in seconds.
    pub first_token_seconds: Option<f64>,
    /// Prompt tokens, as the provider reported them.
    pub prompt_tokens: Option<u64>,
    /// Of those, the ones served from the provider's cache.
    pub cached_tokens: Option<u64>,
    /// Tokens the model wrote.
    pub completion_tokens: Option<u64>,
    /// The text it wrote, cut to a few KB.
    pub text: String,
    /// The text's whole length in characters (more than `text` holds when it was cut).
    pub text_chars: usize,
    /// Its tool calls were written as text (and taken as calls by the loop).
    #[serde(default)]
    pub written_as_text: bool,
    /// Its tool calls, with what became of each.
    pub tool_calls: Vec<ToolCallTrace>,
    /// The provider's stop reason, when it gave one.
    pub stop_reason: Option<String>,
    /// Why the call failed, if it did (the turn then failed too).
    pub error: Option<String>,
}

/// One tool call the model asked for, joined with its stored envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallTrace {
    /// The tool's name, as the model wrote it.
    pub name: String,
    /// The arguments, as the model wrote them (cut).
    pub arguments: String,
    /// Its step number in the turn, when it ran.
    pub step: Option<i64>,
    /// What became of it.
    pub outcome: StepOutcome,
    /// The envelope the agent answered it with, when it ran.
    pub envelope: Option<Value>,
}

/// What became of a tool call the model asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepOutcome {
    /// It ran and succeeded.
    #[serde(rename = "ok")]
    Ok,
    /// It ran (or was refused) and failed.
    #[serde(rename = "failed")]
    Failed,
    /// The loop did not run it (past the step limit, or the turn ended first).
    #[serde(rename = "not run")]
    NotRun,
    /// The model's reply to the person (`HAICO_LLM_AIDS=reply-tool`): not a workspace call.
    #[serde(rename = "reply")]
    Reply,
    /// The model's list of the changes asked for (`HAICO_LLM_AIDS=checklist`), which the loop
    /// keeps: not a workspace call.
    #[serde(rename = "list")]
    List,
}

impl StepOutcome {
    /// `ok`, `failed`, `not run`, `reply` or `list`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::NotRun => "not run",
            Self::Reply => "reply",
            Self::List => "list",
        }
    }
}

/// The trace of a run: `turns[i]` is the turn of `messages[i]`, `walls[i]` its wall time in
/// milliseconds, and `calls` every model call the recorder saw, each marked with its turn.
pub fn join(
    turns: &[StoredTurn],
    messages: &[String],
    walls: &[f64],
    calls: &[RecordedCall],
) -> Vec<TurnTrace> {
    turns
        .iter()
        .enumerate()
        .map(|(i, turn)| {
            let number = i + 1;
            let answer = turn
                .messages
                .iter()
                .rev()
                .find(|m| m.role == "assistant")
                .map(|m| m.content.as_str());
            let mut steps = turn.tool_calls.iter().peekable();
            let model_calls = calls
                .iter()
                .filter(|call| call.turn == number)
                .enumerate()
                .map(|(k, call)| {
                    // A failed model call's calls are never run: the turn fails with it.
                    let runs = call.error.is_none();
                    let tool_calls = call
                        .tool_calls
                        .iter()
                        .map(|asked| {
                            if asked.name == crate::agent::reply::NAME {
                                return reply_call(&asked.name, &asked.arguments, answer);
                            }
                            if asked.name == crate::agent::checklist::NAME {
                                return ToolCallTrace {
                                    outcome: StepOutcome::List,
                                    ..tool_call(&asked.name, &asked.arguments, None)
                                };
                            }
                            let ran = if runs {
                                steps.next_if(|step| step.tool == asked.name)
                            } else {
                                None
                            };
                            tool_call(&asked.name, &asked.arguments, ran)
                        })
                        .collect();
                    call.trace(k + 1, tool_calls)
                })
                .collect();
            let unmatched_steps = steps
                .map(|step| tool_call(&step.tool, &step.arguments.to_string(), Some(step)))
                .collect();
            TurnTrace {
                turn: number,
                message: messages.get(i).cloned().unwrap_or_default(),
                status: turn.status.clone(),
                error: turn.error.clone(),
                seconds: walls.get(i).map(|ms| (ms / 10.0).round() / 100.0),
                model_calls,
                unmatched_steps,
                answer: turn
                    .messages
                    .iter()
                    .rev()
                    .find(|m| m.role == "assistant")
                    .map(|m| m.content.clone()),
            }
        })
        .collect()
}

/// A reply made with the reply tool: `reply` when it is the answer the person got, `failed`
/// when the loop did not send it (no message, or sent back to make the changes first).
fn reply_call(name: &str, arguments: &str, answer: Option<&str>) -> ToolCallTrace {
    let sent = serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|args| args.get("message")?.as_str().map(|m| m.trim().to_string()))
        .is_some_and(|message| !message.is_empty() && answer == Some(message.as_str()));
    ToolCallTrace {
        outcome: if sent {
            StepOutcome::Reply
        } else {
            StepOutcome::Failed
        },
        ..tool_call(name, arguments, None)
    }
}

/// One tool call as asked, with the stored call it became (if it ran).
fn tool_call(name: &str, arguments: &str, ran: Option<&StoredToolCall>) -> ToolCallTrace {
    ToolCallTrace {
        name: name.to_string(),
        arguments: cut(arguments, ARGUMENT_CHARS),
        step: ran.map(|step| step.call_index),
        outcome: match ran {
            Some(step) if step.success => StepOutcome::Ok,
            Some(_) => StepOutcome::Failed,
            None => StepOutcome::NotRun,
        },
        envelope: ran.map(|step| step.result.clone()),
    }
}

/// `text` cut to `max` characters, with an ellipsis when it was longer.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(max).collect();
    kept.push('…');
    kept
}
