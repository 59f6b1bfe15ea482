//! The conversation history sent with each model call: earlier turns' user and assistant
//! messages, newest kept first within a character budget, with a note when older ones are cut.

use serde_json::Value;

use super::model::{ChatMessage, ToolCallRequest};
use crate::tools::ACTION_AND_REASONING;
use haico_core::{workspace::WorkspaceError, workspace::Workspaces};
use haico_store::{StoredTurn, ThreadId};

/// Longest string argument of an earlier call sent back in full; longer ones (a whole
/// document) are cut, since the workspace shows what they left behind.
const ARGUMENT_CHARS: usize = 300;

/// Longest earlier result sent back.
const RESULT_CHARS: usize = 400;

/// Earlier turns of the thread (before `turn_index`) as chat messages within `budget`
/// characters. The result always starts with a user message and never has two messages of
/// the same role in a row (a failed turn has no answer: its message joins the next one). It
/// ends with a user message when the last turn got no answer; the caller adds the new message
/// to that one.
pub async fn load_history(
    workspaces: &Workspaces,
    thread: &ThreadId,
    turn_index: i64,
    budget: usize,
) -> Result<Vec<ChatMessage>, WorkspaceError> {
    let rows = workspaces.earlier_messages(thread, turn_index).await?;
    Ok(fit(
        rows.into_iter()
            .map(|(_, role, content)| (role, content))
            .collect(),
        budget,
    ))
}

/// Earlier turns of the thread (before `turn_index`) as the model lived them: each person's
/// message, the calls the turn made with their results, and the answer
/// (`HAICO_LLM_AIDS=history-calls`). A small model that sees only prose answers of earlier
/// turns learns to answer in prose; seeing its calls, it keeps calling. The newest turns
/// that fit in `budget` characters are kept, with a note when older ones are left out.
pub async fn load_history_with_calls(
    workspaces: &Workspaces,
    thread: &ThreadId,
    turn_index: i64,
    budget: usize,
) -> Result<Vec<ChatMessage>, WorkspaceError> {
    let turns = workspaces.conversation(thread).await?;
    Ok(fit_turns(
        turns
            .iter()
            .filter(|turn| turn.turn_index < turn_index)
            .map(turn_messages)
            .collect(),
        budget,
    ))
}

/// One earlier turn as messages: the person's text, the calls with their results, the answer.
/// A turn that ended without an answer says so, so the next person's message never follows a
/// tool result.
fn turn_messages(turn: &StoredTurn) -> Vec<ChatMessage> {
    let said = |role: &str| -> String {
        turn.messages
            .iter()
            .filter(|m| m.role == role)
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let mut out = vec![ChatMessage::user(said("user"))];
    if !turn.tool_calls.is_empty() {
        let calls: Vec<ToolCallRequest> = turn
            .tool_calls
            .iter()
            .map(|call| ToolCallRequest {
                id: format!("turn{}_call{}", turn.turn_index, call.call_index),
                name: call.tool.clone(),
                arguments: arguments_shown(&call.arguments, call.action_and_reasoning.as_deref()),
            })
            .collect();
        let results: Vec<ChatMessage> = turn
            .tool_calls
            .iter()
            .zip(&calls)
            .map(|(call, request)| {
                ChatMessage::tool(
                    request.id.clone(),
                    call.tool.clone(),
                    cut(&call.result.to_string(), RESULT_CHARS),
                )
            })
            .collect();
        out.push(ChatMessage::assistant(String::new(), calls));
        out.extend(results);
    }
    let answer = said("assistant");
    out.push(ChatMessage::assistant(
        if answer.trim().is_empty() {
            "(this turn ended without an answer: it failed or was cancelled)".to_string()
        } else {
            answer
        },
        Vec::new(),
    ));
    out
}

/// An earlier call's arguments as JSON text, with its `action_and_reasoning` back in and long
/// strings cut.
fn arguments_shown(arguments: &Value, reason: Option<&str>) -> String {
    let mut shown = shorten(arguments);
    if let (Value::Object(object), Some(reason)) = (&mut shown, reason) {
        object.insert(
            ACTION_AND_REASONING.to_string(),
            Value::String(reason.to_string()),
        );
    }
    shown.to_string()
}

fn shorten(value: &Value) -> Value {
    match value {
        Value::String(text) if text.chars().count() > ARGUMENT_CHARS => {
            Value::String(cut(text, ARGUMENT_CHARS))
        }
        Value::Array(items) => Value::Array(items.iter().map(shorten).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (key.clone(), shorten(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max).collect();
    short.push_str(&format!(" […{} more characters]", total - max));
    short
}

/// The characters a message costs against the history budget.
fn size(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::User { content } | ChatMessage::Tool { content, .. } => {
            content.chars().count()
        }
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            content.chars().count()
                + tool_calls
                    .iter()
                    .map(|call| call.name.len() + call.arguments.chars().count())
                    .sum::<usize>()
        }
    }
}

/// The newest turns that fit in `budget` characters, with a note on the first kept message
/// when older turns are left out.
fn fit_turns(turns: Vec<Vec<ChatMessage>>, budget: usize) -> Vec<ChatMessage> {
    let total = turns.len();
    let mut kept: Vec<Vec<ChatMessage>> = Vec::new();
    let mut used = 0usize;
    for turn in turns.into_iter().rev() {
        let cost: usize = turn.iter().map(size).sum();
        if used + cost > budget {
            break;
        }
        used += cost;
        kept.push(turn);
    }
    kept.reverse();
    let omitted = total - kept.len();
    let mut out: Vec<ChatMessage> = kept.into_iter().flatten().collect();
    if omitted > 0
        && let Some(ChatMessage::User { content }) = out.first_mut()
    {
        *content =
            format!("[{omitted} earlier turns of this conversation are not shown]\n\n{content}");
    }
    out
}

fn fit(rows: Vec<(String, String)>, budget: usize) -> Vec<ChatMessage> {
    // Keep the newest messages that fit.
    let mut kept: Vec<(String, String)> = Vec::new();
    let mut used = 0usize;
    let total = rows.len();
    for (role, content) in rows.into_iter().rev() {
        let size = content.chars().count();
        if used + size > budget {
            break;
        }
        used += size;
        kept.push((role, content));
    }
    kept.reverse();
    let omitted = total - kept.len();
    // Merge runs of the same role and make sure the history opens with the user.
    let mut merged: Vec<(String, String)> = Vec::new();
    for (role, content) in kept {
        match merged.last_mut() {
            Some((last_role, last)) if *last_role == role => {
                last.push_str("\n\n");
                last.push_str(&content);
            }
            _ => merged.push((role, content)),
        }
    }
    if merged.first().is_some_and(|(role, _)| role != "user") {
        merged.remove(0);
    }
    let mut out: Vec<ChatMessage> = merged
        .into_iter()
        .map(|(role, content)| {
            if role == "user" {
                ChatMessage::user(content)
            } else {
                ChatMessage::assistant(content, Vec::new())
            }
        })
        .collect();
    if omitted > 0
        && let Some(ChatMessage::User { content }) = out.first_mut()
    {
        *content =
            format!("[{omitted} earlier messages of this conversation are not shown]\n\n{content}");
    }
    // A history that ends with the user (a failed or cancelled last turn) keeps that message,
    // marked as unanswered; the new message joins it rather than following it.
    if let Some(ChatMessage::User { content }) = out.last_mut() {
        content.push_str("\n\n[this message got no answer: its turn failed or was cancelled]");
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn row(role: &str, text: &str) -> (String, String) {
        (role.to_string(), text.to_string())
    }

    #[test]
    fn keeps_newest_within_budget_and_alternates() {
        let rows = vec![
            row("user", "aaaa"),
            row("assistant", "bbbb"),
            row("user", "cc"),
            row("user", "dd"),
            row("assistant", "ee"),
        ];
        let out = fit(rows.clone(), 1_000);
        assert_eq!(out.len(), 4);
        assert_eq!(out[2], ChatMessage::user("cc\n\ndd"));
        let out = fit(rows, 7);
        // "ee", "dd", "cc" fit (6 chars); "bbbb" does not.
        assert_eq!(
            out,
            vec![
                ChatMessage::user(
                    "[2 earlier messages of this conversation are not shown]\n\ncc\n\ndd"
                ),
                ChatMessage::assistant("ee", Vec::new()),
            ]
        );
    }

    #[test]
    fn earlier_calls_keep_their_reason_and_lose_long_texts() {
        let shown = arguments_shown(
            &serde_json::json!({"content": "y".repeat(1_000), "title": "Letter"}),
            Some("Writing the letter."),
        );
        let value: Value = serde_json::from_str(&shown).unwrap_or_default();
        assert_eq!(value["action_and_reasoning"], "Writing the letter.");
        assert_eq!(value["title"], "Letter");
        let content = value["content"].as_str().unwrap_or_default();
        assert!(content.ends_with("[…700 more characters]"), "{content}");
    }

    #[test]
    fn whole_turns_are_kept_newest_first_within_the_budget() {
        let turn = |text: &str| {
            vec![
                ChatMessage::user(text),
                ChatMessage::assistant(
                    "",
                    vec![ToolCallRequest {
                        id: "c".into(),
                        name: "set_objective".into(),
                        arguments: "{}".into(),
                    }],
                ),
                ChatMessage::tool("c", "set_objective", "ok"),
                ChatMessage::assistant("done", Vec::new()),
            ]
        };
        let all = fit_turns(vec![turn("first"), turn("second")], 1_000);
        assert_eq!(all.len(), 8);
        // A turn costs its texts, the call's name and arguments: 5 + 15 + 2 + 4 = 26 ("second": 27).
        let newest = fit_turns(vec![turn("first"), turn("second")], 30);
        assert_eq!(newest.len(), 4);
        assert_eq!(
            newest[0],
            ChatMessage::user("[1 earlier turns of this conversation are not shown]\n\nsecond")
        );
    }

    #[test]
    fn keeps_a_trailing_unanswered_message_marked() {
        let out = fit(
            vec![row("user", "a"), row("assistant", "b"), row("user", "c")],
            100,
        );
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[2],
            ChatMessage::user(
                "c\n\n[this message got no answer: its turn failed or was cancelled]"
            )
        );
    }
}
