//! Checks judged on the recorded turns, their tool calls and the model's answers: attempts on
//! locked preferences, failed and repeated calls, how turns ended, which tools were used, and
//! what the last answer said.

use super::*;
use crate::eval::trace::StepOutcome;

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

/// `turn 2 step 3 add_todos: "…"`.
fn step_line(turn: i64, call: &StoredToolCall) -> String {
    format!(
        "turn {turn} step {} {}: {}",
        call.call_index,
        call.tool,
        quote(envelope_text(call))
    )
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
        .map(|(turn, call)| step_line(turn, call))
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

/// Whether the agent refused `call` as a repeat of an earlier call of its turn (counted by
/// `no_repeated_calls`, so `max_failed_calls` does not count it again).
pub(super) fn refused_repeat(call: &StoredToolCall) -> bool {
    !call.success
        && call
            .result
            .get("error")
            .and_then(Value::as_str)
            .is_some_and(|error| error.trim_start().starts_with(REPEAT_MARKER))
}

/// How a failed call is counted by `max_failed_calls`.
enum Failure {
    /// It counts.
    Counted,
    /// The agent refused it as a repeat.
    Repeat,
    /// The next call of the turn, to the same tool, succeeded: the model read the error and
    /// fixed its call, which is what failure envelopes are for.
    Repaired,
}

fn failure_of(call: &StoredToolCall, next: Option<&StoredToolCall>) -> Failure {
    if refused_repeat(call) {
        Failure::Repeat
    } else if next.is_some_and(|next| next.tool == call.tool && next.success) {
        Failure::Repaired
    } else {
        Failure::Counted
    }
}

pub(super) fn max_failed_calls(turns: &[StoredTurn], max: usize) -> (bool, String) {
    let mut counted = Vec::new();
    let (mut repeats, mut repaired) = (0usize, 0usize);
    for turn in turns {
        for (i, call) in turn.tool_calls.iter().enumerate() {
            if call.success {
                continue;
            }
            match failure_of(call, turn.tool_calls.get(i + 1)) {
                Failure::Counted => counted.push(step_line(turn.turn_index, call)),
                Failure::Repeat => repeats += 1,
                Failure::Repaired => repaired += 1,
            }
        }
    }
    let total = calls(turns).count();
    let mut aside = Vec::new();
    if repeats > 0 {
        aside.push(format!("{} refused as a repeat", plural(repeats, "call")));
    }
    if repaired > 0 {
        aside.push(format!("{repaired} repaired by the next call"));
    }
    let aside = if aside.is_empty() {
        String::new()
    } else {
        format!(" (not counted: {})", aside.join(", "))
    };
    match counted.first() {
        None => (
            true,
            format!("no failed call counted among {total} (at most {max}){aside}"),
        ),
        Some(first) => (
            counted.len() <= max,
            format!(
                "{} of {} failed (at most {max}){aside}; first: {first}",
                counted.len(),
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

/// The turn's answer to the person: its last assistant message.
fn answer_of(turn: &StoredTurn) -> Option<&str> {
    turn.messages
        .iter()
        .rev()
        .find(|m| m.role == "assistant")
        .map(|m| m.content.as_str())
}

/// Why a completed turn was not ended by the model, judged on its trace: the loop ends a turn
/// without asking the model again at the step limit, after rounds of failed calls, or after
/// an ignored request to stop repeating; in each case the model's last answer still asked for
/// tool calls.
fn ended_by_loop(turn: &StoredTurn, trace: &TurnTrace, max_steps: usize) -> Option<String> {
    let Some(last) = trace.model_calls.last() else {
        return Some("no model call was recorded".into());
    };
    if let Some(error) = &last.error {
        return Some(format!(
            "its last model call failed: {}",
            quote_up_to(error, ERROR_CHARS)
        ));
    }
    // A reply sent with the reply tool is the model's own answer, as text would be.
    if last.tool_calls.is_empty()
        || last
            .tool_calls
            .iter()
            .any(|call| call.outcome == StepOutcome::Reply)
    {
        return None;
    }
    let steps = turn.tool_calls.len();
    let limit = if steps >= max_steps {
        format!("stopped at the step limit ({steps} of {max_steps} tool calls), ")
    } else {
        String::new()
    };
    let answer = answer_of(turn)
        .map(|text| format!("; the loop answered {}", quote(text)))
        .unwrap_or_default();
    Some(format!(
        "ended by the loop, not the model: {limit}the model's last answer (call {}) still asked \
         for {}{answer}",
        last.call,
        plural(last.tool_calls.len(), "tool call")
    ))
}

pub(super) fn ended_by_model(
    turns: &[StoredTurn],
    traces: Option<&[TurnTrace]>,
    max_steps: usize,
) -> (bool, String) {
    let mut problems = Vec::new();
    for turn in turns {
        let calls = turn.tool_calls.len();
        let trace = traces.and_then(|traces| {
            traces
                .iter()
                .find(|trace| i64::try_from(trace.turn).is_ok_and(|n| n == turn.turn_index))
        });
        let problem = match (turn.status.as_str(), trace) {
            ("completed", Some(trace)) => ended_by_loop(turn, trace, max_steps),
            // Without a trace, the count is what tells: at the limit the loop ends without
            // asking the model again, and still records the turn as completed.
            ("completed", None) if calls >= max_steps => Some(format!(
                "stopped at the step limit ({calls} of {max_steps} tool calls)"
            )),
            ("completed", None) => None,
            (status, _) => Some(match &turn.error {
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

pub(super) fn answer_mentions(turns: &[StoredTurn], terms: &[Term]) -> (bool, String) {
    let Some(last) = turns.last() else {
        return (false, "no turn ran".into());
    };
    let Some(answer) = answer_of(last) else {
        return (
            false,
            format!(
                "the last turn ({}, {}) has no answer",
                last.turn_index, last.status
            ),
        );
    };
    let absent = missing(terms, &normalize(answer));
    if absent.is_empty() {
        (
            true,
            format!(
                "found {} in the last answer {}",
                plural(terms.len(), "term"),
                quote(answer)
            ),
        )
    } else {
        (
            false,
            format!(
                "missing {} in the last answer {}",
                absent.join(", "),
                quote(answer)
            ),
        )
    }
}
