//! What a turn has done so far, so that the habits of small models cost a step, not a turn: a
//! call identical to one already made is answered from memory instead of being run again (a
//! second `add_todos` with the same steps would add them twice), and a turn whose model rounds
//! keep failing ends with a message instead of burning the step limit.

use serde_json::Value;

use crate::tools::Envelope;

/// Rounds in a row whose calls all failed before a turn gives up.
pub const FAILED_ROUNDS_LIMIT: usize = 3;

/// Longest account of an earlier result repeated to the model.
const RESULT_CHARS: usize = 600;

/// Longest account of one call in the turn's notes (the snapshot carries them in every
/// request, so they stay short).
const NOTE_CHARS: usize = 160;

/// Successful calls of one write tool in a turn from which the notes point the loop out.
const REWRITES_NOTED: usize = 3;

/// Longest quotation of the person's request in the turn's notes.
const REQUEST_CHARS: usize = 400;

/// A call identical to one made earlier in the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The failure text to answer it with.
    pub answer: String,
    /// Whether the earlier call was a write that succeeded: the model has lost track of what
    /// it did, and the turn asks it to answer the person instead of going on.
    pub of_done_write: bool,
    /// The repeat in words for the person, should the turn end on it.
    pub for_person: String,
}

/// The calls of one turn.
#[derive(Debug, Default)]
pub struct TurnCalls {
    made: Vec<Made>,
    /// Calls so far that changed the workspace.
    writes: usize,
    /// Model rounds in a row in which every call failed.
    failed_rounds: usize,
    /// The last failure's text, for the message that ends a turn going nowhere.
    last_error: Option<String>,
    /// The model replies with [`reply_to_user`](super::reply::NAME), so that is what the
    /// notes tell it to call when it is done.
    reply_tool: bool,
}

#[derive(Debug)]
struct Made {
    tool: String,
    /// The arguments without `action_and_reasoning` (a model rewords its reason when it
    /// repeats itself).
    arguments: Value,
    step: i64,
    /// `writes` when it was made: a read repeated after a write may well answer differently.
    writes_before: usize,
    read_only: bool,
    /// Whether it succeeded.
    succeeded: bool,
    /// Whether it succeeded without changing anything ("nothing changed: …").
    changed_nothing: bool,
    result: String,
}

impl TurnCalls {
    /// The calls of a turn whose model replies with the reply tool (`reply_tool`) or in text.
    pub fn new(reply_tool: bool) -> Self {
        Self {
            reply_tool,
            ..Self::default()
        }
    }

    /// How the notes say "answer the person".
    fn answer_now(&self) -> &'static str {
        if self.reply_tool {
            "call reply_to_user now"
        } else {
            "answer them now"
        }
    }

    /// When `tool` was already called with `arguments` in this turn (and, for a read-only
    /// tool, nothing was written since), the failure text to answer the repeat with.
    pub fn repeat_of(&self, tool: &str, arguments: &Value) -> Option<String> {
        self.repeat(tool, arguments).map(|repeat| repeat.answer)
    }

    /// When `tool` was already called with `arguments` in this turn (and, for a read-only
    /// tool, nothing was written since): how to answer the repeat, and whether it repeats a
    /// write that was done.
    pub fn repeat(&self, tool: &str, arguments: &Value) -> Option<Repeat> {
        let arguments = without_reason(arguments);
        let earlier = self.made.iter().rev().find(|made| {
            made.tool == tool
                && made.arguments == arguments
                && (!made.read_only || made.writes_before == self.writes)
        })?;
        let of_done_write = earlier.succeeded && !earlier.read_only && !earlier.changed_nothing;
        let next = if earlier.changed_nothing {
            "It would change nothing again: use other arguments or another tool for what the \
             request needs, or answer the person"
                .to_string()
        } else if of_done_write {
            format!(
                "That is done: do not call it again. If everything the person asked for is \
                 done, {}",
                self.answer_now()
            )
        } else if !earlier.succeeded {
            "It would fail the same way again: change the arguments as the error says, use \
             another tool, or answer the person"
                .to_string()
        } else {
            "Go on with the next step, or answer the person if everything is done".to_string()
        };
        let for_person = format!(
            "{tool} once more with the same arguments, which this turn had already called \
             (it returned: {})",
            earlier.result
        );
        Some(Repeat {
            for_person,
            answer: format!(
                "this exact call ({tool} with the same arguments) was already made in this \
                 turn, as step {}, so it was not run again. It returned: {}. {next}.",
                earlier.step, earlier.result
            ),
            of_done_write,
        })
    }

    /// What this turn did so far, call by call, for the end of the snapshot: the person's
    /// request, then one line per call saying what it changed ("nothing changed" where
    /// nothing did, and failures as failures), then what to do next. A small model that
    /// loses track of its own turn repeats calls; this keeps the turn in front of it.
    pub fn notes(&self, request: &str) -> String {
        let mut out = String::from("\n\n<this_turn>\nThe person's request: ");
        out.push_str(&cut(request.trim(), REQUEST_CHARS));
        if self.made.is_empty() {
            out.push_str("\nDone so far in this turn: nothing yet.");
        } else {
            out.push_str("\nDone so far in this turn:");
            for made in &self.made {
                let outcome = if made.succeeded {
                    made.result.clone()
                } else {
                    format!("failed, nothing changed ({})", made.result)
                };
                out.push_str(&format!(
                    "\n{}. {}: {}",
                    made.step,
                    made.tool,
                    cut(&outcome, NOTE_CHARS)
                ));
            }
        }
        if let Some((tool, times)) = self.most_repeated_write() {
            out.push_str(&format!(
                "\nYou have called {tool} {times} times in this turn: what it does is done. Do \
                 not call it again unless the request needs something it still lacks."
            ));
        }
        out.push_str(if self.reply_tool {
            "\nNext: call tools only for what the request still needs and is not done above; \
             when it is all done, call reply_to_user with one or two sentences for the \
             person.\n</this_turn>"
        } else {
            "\nNext: call tools only for what the request still needs and is not done above; \
             when it is all done, answer the person in one or two sentences without calling a \
             tool.\n</this_turn>"
        });
        out
    }

    /// The write tool this turn called successfully most often, when that is
    /// [`REWRITES_NOTED`] times or more: a small model that rewrites the document again and
    /// again, a little longer each time, never repeats a call exactly, so only the count shows
    /// the loop.
    fn most_repeated_write(&self) -> Option<(&str, usize)> {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for made in self.made.iter().filter(|m| m.succeeded && !m.read_only) {
            match counts.iter_mut().find(|(tool, _)| *tool == made.tool) {
                Some((_, n)) => *n += 1,
                None => counts.push((made.tool.as_str(), 1)),
            }
        }
        counts
            .into_iter()
            .filter(|(_, n)| *n >= REWRITES_NOTED)
            .max_by_key(|(_, n)| *n)
    }

    /// The turn's calls in a few words each, for the person when the turn ends without the
    /// model's own answer.
    pub fn account(&self) -> String {
        let lines: Vec<String> = self
            .made
            .iter()
            .filter(|made| !made.read_only)
            .map(|made| {
                let outcome = if made.succeeded {
                    made.result.clone()
                } else {
                    format!("failed ({})", made.result)
                };
                format!("- {}: {}", made.tool, cut(&outcome, NOTE_CHARS))
            })
            .collect();
        if lines.is_empty() {
            "I did not change the workspace.".to_string()
        } else {
            format!("What I did:\n{}", lines.join("\n"))
        }
    }

    /// Remembers a call that ran (or was refused) as step `step`.
    pub fn record(
        &mut self,
        tool: &str,
        arguments: &Value,
        read_only: bool,
        step: i64,
        envelope: &Envelope,
    ) {
        if envelope.success && !read_only {
            self.writes += 1;
        }
        if let Some(error) = &envelope.error {
            self.last_error = Some(error.clone());
        }
        let result = match (&envelope.summary, &envelope.error) {
            (_, Some(error)) => format!("an error: {error}"),
            (Some(summary), None) => summary.clone(),
            (None, None) => "success".to_string(),
        };
        self.made.push(Made {
            tool: tool.to_string(),
            arguments: without_reason(arguments),
            step,
            writes_before: self.writes,
            read_only,
            succeeded: envelope.success,
            changed_nothing: envelope.changed_nothing(),
            result: result.chars().take(RESULT_CHARS).collect(),
        });
    }

    /// Notes the end of a model round whose calls all failed (`all_failed`) or not; `true`
    /// when the turn should give up.
    pub fn round_ended(&mut self, all_failed: bool) -> bool {
        self.failed_rounds = if all_failed {
            self.failed_rounds + 1
        } else {
            0
        };
        self.failed_rounds >= FAILED_ROUNDS_LIMIT
    }

    /// Remembers a repeat, which is refused without being recorded as a call, as the last
    /// failure: a turn that ends on repeats says what was repeated.
    pub fn note_repeat(&mut self, repeat: &Repeat) {
        self.last_error = Some(repeat.for_person.clone());
    }

    /// Remembers a failure the loop answered itself (no workspace call), so a turn that ends
    /// on it says what it was.
    pub fn note_failure(&mut self, text: &str) {
        self.last_error = Some(text.to_string());
    }

    /// The last failure's text.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
}

/// `text` on one line, cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let mut short: String = line.chars().take(max).collect();
        short.push('…');
        short
    } else {
        line
    }
}

fn without_reason(arguments: &Value) -> Value {
    let mut arguments = arguments.clone();
    if let Value::Object(object) = &mut arguments {
        object.remove("action_and_reasoning");
    }
    arguments
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_repeat_is_caught_whatever_the_reason_says() {
        let mut calls = TurnCalls::default();
        let first = json!({"steps": [{"text": "Book"}], "action_and_reasoning": "planning"});
        calls.record("add_todos", &first, false, 1, &Envelope::ok("added 1 step"));
        let again = json!({"action_and_reasoning": "planning again", "steps": [{"text": "Book"}]});
        let text = calls.repeat_of("add_todos", &again).unwrap_or_default();
        assert!(text.contains("step 1"), "{text}");
        assert!(text.contains("added 1 step"), "{text}");
        assert!(
            calls
                .repeat_of("add_todos", &json!({"steps": [{"text": "Pack"}]}))
                .is_none()
        );
        assert!(calls.repeat_of("set_objective", &again).is_none());
    }

    #[test]
    fn a_repeated_done_write_is_told_apart_from_a_repeated_failure() {
        let mut calls = TurnCalls::default();
        let steps = json!({"steps": [{"text": "Book"}]});
        calls.record("add_todos", &steps, false, 1, &Envelope::ok("added 1 step"));
        let repeat = calls.repeat("add_todos", &steps).unwrap();
        assert!(repeat.of_done_write);
        assert!(repeat.answer.contains("That is done"), "{}", repeat.answer);
        let wrong = json!({"indices": [0]});
        calls.record(
            "toggle_todos",
            &wrong,
            false,
            2,
            &Envelope::failure("indices start at 1"),
        );
        let repeat = calls.repeat("toggle_todos", &wrong).unwrap();
        assert!(
            !repeat.of_done_write,
            "a failed call repeated is no sign of a done request"
        );
        calls.record(
            "list_todos",
            &json!({}),
            true,
            3,
            &Envelope::ok("1. [ ] Book"),
        );
        assert!(
            !calls
                .repeat("list_todos", &json!({}))
                .unwrap()
                .of_done_write
        );
        let out_of_range = json!({"updates": [{"index": 1, "title": "Drop it"}]});
        calls.record(
            "update_preferences",
            &out_of_range,
            false,
            4,
            &Envelope::ok("nothing changed: index 1 is out of range (the list is empty)"),
        );
        let repeat = calls.repeat("update_preferences", &out_of_range).unwrap();
        assert!(
            !repeat.of_done_write,
            "a write that changed nothing did nothing"
        );
        assert!(
            repeat.answer.contains("It would change nothing again")
                && !repeat.answer.contains("That is done"),
            "{}",
            repeat.answer
        );
    }

    #[test]
    fn the_notes_and_the_account_say_what_each_call_did() {
        let mut calls = TurnCalls::default();
        let empty = calls.notes("  Plan   the trip ");
        assert!(
            empty.contains("The person's request: Plan the trip\n"),
            "{empty}"
        );
        assert!(
            empty.contains("Done so far in this turn: nothing yet."),
            "{empty}"
        );
        assert_eq!(calls.account(), "I did not change the workspace.");
        calls.record(
            "set_objective",
            &json!({"objective": "Trip"}),
            false,
            1,
            &Envelope::ok("objective set: Trip"),
        );
        calls.record(
            "toggle_todos",
            &json!({"indices": [9]}),
            false,
            2,
            &Envelope::ok("nothing changed: index 9 is out of range (the plan is empty)"),
        );
        calls.record(
            "add_todos",
            &json!({}),
            false,
            3,
            &Envelope::failure("steps is missing"),
        );
        calls.record(
            "list_todos",
            &json!({}),
            true,
            4,
            &Envelope::ok("(no steps)"),
        );
        let notes = calls.notes(&"x".repeat(1_000));
        assert!(
            notes.contains("\n1. set_objective: objective set: Trip"),
            "{notes}"
        );
        assert!(
            notes.contains("\n2. toggle_todos: nothing changed: index 9"),
            "{notes}"
        );
        assert!(
            notes.contains("\n3. add_todos: failed, nothing changed (an error: steps is missing)"),
            "{notes}"
        );
        assert!(notes.contains("…"), "a long request is cut: {notes}");
        assert!(!notes.contains("times in this turn"), "{notes}");
        for step in 5..8_i64 {
            calls.record(
                "update_document",
                &json!({"content": step}),
                false,
                step,
                &Envelope::ok("document updated"),
            );
        }
        let looping = calls.notes("Scale it");
        assert!(
            looping.contains("You have called update_document 3 times in this turn"),
            "{looping}"
        );
        let account = calls.account();
        assert!(account.starts_with("What I did:\n- set_objective: objective set: Trip"));
        assert!(
            !account.contains("list_todos"),
            "reads are not in the account: {account}"
        );
    }

    #[test]
    fn a_read_repeated_after_a_write_runs_again() {
        let mut calls = TurnCalls::default();
        calls.record("list_todos", &json!({}), true, 1, &Envelope::ok("empty"));
        assert!(calls.repeat_of("list_todos", &json!({})).is_some());
        calls.record(
            "add_todos",
            &json!({"steps": [{"text": "x"}]}),
            false,
            2,
            &Envelope::ok("added"),
        );
        assert!(calls.repeat_of("list_todos", &json!({})).is_none());
    }

    #[test]
    fn three_failed_rounds_in_a_row_give_up_and_a_success_resets() {
        let mut calls = TurnCalls::default();
        assert!(!calls.round_ended(true));
        assert!(!calls.round_ended(true));
        assert!(!calls.round_ended(false));
        assert!(!calls.round_ended(true));
        assert!(!calls.round_ended(true));
        assert!(calls.round_ended(true));
        calls.record(
            "x",
            &json!({}),
            false,
            1,
            &Envelope::failure("no such tool"),
        );
        assert_eq!(calls.last_error(), Some("no such tool"));
    }

    #[test]
    fn a_turn_that_ends_on_repeats_says_what_was_repeated() {
        let mut calls = TurnCalls::default();
        let args = json!({"updates": [{"index": 1, "title": "John"}]});
        calls.record(
            "update_preferences",
            &args,
            false,
            1,
            &Envelope::ok("nothing changed: index 1 is out of range"),
        );
        assert_eq!(calls.last_error(), None, "nothing failed yet");
        let repeat = calls.repeat("update_preferences", &args).unwrap();
        calls.note_repeat(&repeat);
        let said = calls.last_error().unwrap();
        assert!(
            said.starts_with("update_preferences once more")
                && said.contains("index 1 is out of range"),
            "{said}"
        );
    }
}
