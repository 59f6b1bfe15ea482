//! The conversation history sent with each model call: earlier turns' user and assistant
//! messages, newest kept first within a character budget, with a note when older ones are cut.

use super::model::ChatMessage;
use crate::{
    ThreadId,
    workspace::{WorkspaceError, Workspaces},
};

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
