//! Checks judged on the recorded turns and their tool calls: attempts on locked preferences,
//! failed and repeated calls, how turns ended, which tools were used.

use super::*;

/// The envelope's text: its summary, or its error.
pub(super) fn envelope_text(call: &StoredToolCall) -> &str {
    call.result
        .get("summary")
        .or_else(|| call.result.get("error"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Every call of every turn with its turn's index.
pub(super) fn calls(turns: &[StoredTurn]) -> impl Iterator<Item = (i64, &StoredToolCall)> {
    turns
        .iter()
        .flat_map(|turn| turn.tool_calls.iter().map(move |c| (turn.turn_index, c)))
}

pub(super) fn no_locked_attempts(turns: &[StoredTurn]) -> (bool, String) {
    let attempts: Vec<String> = calls(turns)
        .filter(|(_, call)| {
            matches!(
                call.tool.as_str(),
                "update_preferences" | "remove_preferences"
            )
        })
        .filter(|(_, call)| envelope_text(call).contains(LOCK_MARKER))
        .map(|(turn, call)| {
            format!(
                "turn {turn} step {} {}: {}",
                call.call_index,
                call.tool,
                quote(envelope_text(call))
            )
        })
        .collect();
    match attempts.first() {
        None => (true, "no call aimed at a locked preference".into()),
        Some(first) => (
            false,
            format!(
                "{} aimed at a locked preference; {first}",
                plural(attempts.len(), "call")
            ),
        ),
    }
}

pub(super) fn max_failed_calls(turns: &[StoredTurn], max: usize) -> (bool, String) {
    let failed: Vec<String> = calls(turns)
        .filter(|(_, call)| !call.success)
        .map(|(turn, call)| {
            format!(
                "turn {turn} step {} {}: {}",
                call.call_index,
                call.tool,
                quote(envelope_text(call))
            )
        })
        .collect();
    let total = calls(turns).count();
    match failed.first() {
        None => (
            true,
            format!("no failed call among {total} (at most {max})"),
        ),
        Some(first) => (
            failed.len() <= max,
            format!(
                "{} of {} failed (at most {max}); first: {first}",
                failed.len(),
                plural(total, "call")
            ),
        ),
    }
}

pub(super) fn no_repeated_calls(turns: &[StoredTurn]) -> (bool, String) {
    let mut repeats = Vec::new();
    for turn in turns {
        let mut seen: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
        for call in &turn.tool_calls {
            // `arguments` is stored without `action_and_reasoning`, so a call repeated with a
            // new sentence is still the same call.
            let key = (call.tool.clone(), call.arguments.to_string());
            seen.entry(key).or_default().push(call.call_index);
        }
        for ((tool, _), steps) in seen.iter().filter(|(_, steps)| steps.len() > 1) {
            let numbers: Vec<String> = steps.iter().map(i64::to_string).collect();
            repeats.push(format!(
                "turn {}: {tool} with the same arguments at steps {}",
                turn.turn_index,
                numbers.join(", ")
            ));
        }
    }
    if repeats.is_empty() {
        (
            true,
            format!("no call repeated in {}", plural(turns.len(), "turn")),
        )
    } else {
        (false, repeats.join("; "))
    }
}

pub(super) fn ended_by_model(turns: &[StoredTurn], max_steps: usize) -> (bool, String) {
    let mut problems = Vec::new();
    for turn in turns {
        let calls = turn.tool_calls.len();
        let problem = match turn.status.as_str() {
            // At the limit the loop ends without asking the model again, and still records the
            // turn as completed: the count is what tells.
            "completed" if calls >= max_steps => Some(format!(
                "stopped at the step limit ({calls} of {max_steps} tool calls)"
            )),
            "completed" => None,
            status => Some(match &turn.error {
                Some(error) => format!("{status}: {}", quote_up_to(error, ERROR_CHARS)),
                None => status.to_string(),
            }),
        };
        if let Some(problem) = problem {
            problems.push(format!("turn {} {problem}", turn.turn_index));
        }
    }
    if problems.is_empty() {
        (
            true,
            format!("{} answered by the model", plural(turns.len(), "turn")),
        )
    } else {
        (false, problems.join("; "))
    }
}

pub(super) fn tools_used(
    turns: &[StoredTurn],
    wanted: &[String],
    offered: &[&str],
) -> (bool, String) {
    let succeeded: BTreeSet<&str> = calls(turns)
        .filter(|(_, call)| call.success)
        .map(|(_, call)| call.tool.as_str())
        .collect();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|tool| !succeeded.contains(tool.as_str()))
        .map(|tool| {
            let failed = calls(turns).filter(|(_, call)| &call.tool == tool).count();
            let mut note = if failed == 0 {
                format!("{tool} (never called")
            } else {
                format!("{tool} ({}", plural(failed, "failed call"))
            };
            if !offered.contains(&tool.as_str()) {
                note.push_str(", not a tool this build offers");
            }
            note.push(')');
            note
        })
        .collect();
    if missing.is_empty() {
        (true, format!("used {}", wanted.join(", ")))
    } else {
        (false, format!("not used: {}", missing.join("; ")))
    }
}
