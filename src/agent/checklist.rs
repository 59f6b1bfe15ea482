//! The person's request as a list of changes, made one at a time (`HAICO_LLM_AIDS=checklist`).
//!
//! A small model given a message with four changes in it makes one or two of them, then calls
//! the last one again, or replies as if all were done: it cannot hold the whole request and
//! its own progress in view at once. With this aid the turn begins with the model listing the
//! changes asked for ([`NAME`], answered by the loop, never a workspace call); from then on
//! the note read last in every request names the one change to make now, and the loop moves
//! to the next when a call changed the workspace (or after [`TRIES_PER_CHANGE`] calls that
//! did not). When every change is handled the note asks for the reply. The model still
//! chooses every tool and every argument: the loop only keeps the list.
//!
//! The tool is in the list of every request of the configuration, so the prompt's head stays
//! the same bytes and a prompt cache keeps it; only the note at the end changes.

use serde_json::{Value, json};

use super::model::{ToolCallRequest, ToolDefinition};
use crate::tools::Envelope;

/// The listing tool's name.
pub const NAME: &str = "list_changes";

/// Most changes one list holds: more than any one message asks for, and a bound on a model
/// that keeps writing items.
const MAX_CHANGES: usize = 8;

/// Longest item the schema allows.
const MAX_ITEM_CHARS: u64 = 200;

/// Calls that changed nothing (failed, or "nothing changed") after which the loop gives up on
/// a change and goes on to the next.
pub const TRIES_PER_CHANGE: u8 = 2;

/// What the instructions add with this aid.
pub const INSTRUCTIONS: &str = "

Every turn begins with list_changes, before any other call (the examples above start after \
it): list every change the user's message asks for, one short item per change, in their order \
(an empty list when the message only asks a question). Then haico gives you the changes one at \
a time: make each with the workspace tools, and when all are done, call reply_to_user.";

/// The listing tool.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.to_string(),
        description: "First in every turn: list each change to the workspace that the user's \
                      message asks for, one short item per change, in their order. An empty \
                      list when the message only asks a question."
            .to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "changes": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_ITEM_CHARS},
                    "maxItems": MAX_CHANGES,
                }
            },
            "required": ["changes"],
            "additionalProperties": false,
        }),
    }
}

/// Whether `call` is the listing call.
pub fn is_list(call: &ToolCallRequest) -> bool {
    call.name == NAME
}

/// The changes a listing call names, or what is wrong with it (as the model is told).
pub fn changes(call: &ToolCallRequest) -> Result<Vec<String>, String> {
    let arguments: Value = serde_json::from_str(&call.arguments).map_err(|_| {
        "invalid arguments: not a JSON object: give {\"changes\": [\"one change\", …]}".to_string()
    })?;
    let Some(Value::Array(items)) = arguments.get("changes") else {
        return Err("invalid arguments: `changes` must be a list of short texts".to_string());
    };
    let mut changes = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(text) if !text.trim().is_empty() => {
                let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if !changes.contains(&text) {
                    changes.push(text);
                }
            }
            Value::String(_) => {}
            _ => return Err("invalid arguments: each change must be a text".to_string()),
        }
    }
    changes.truncate(MAX_CHANGES);
    Ok(changes)
}

/// What a workspace call did, for the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It changed the workspace.
    Changed,
    /// It only read.
    Read,
    /// It failed or changed nothing.
    Nothing,
    /// It repeated a write this turn had already made: the model takes that change as done.
    RepeatedDone,
    /// It repeated a call that failed or changed nothing: the same call cannot do more, so
    /// the change is given up at once.
    RepeatedNothing,
}

/// What a workspace call that answered `envelope` did: `repeat` when it repeated a call of
/// this turn (refused, not run), `of_done_write` when what it repeated was a write that changed
/// the workspace, `read_only` for a tool that only reads.
pub fn effect(envelope: &Envelope, read_only: bool, repeat: bool, of_done_write: bool) -> Effect {
    if of_done_write {
        Effect::RepeatedDone
    } else if repeat {
        Effect::RepeatedNothing
    } else if !envelope.success {
        Effect::Nothing
    } else if read_only {
        Effect::Read
    } else if envelope.changed_nothing() {
        Effect::Nothing
    } else {
        Effect::Changed
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Done,
    GaveUp,
}

#[derive(Debug)]
struct Change {
    text: String,
    state: State,
    tries: u8,
}

/// Where the turn's list stands.
#[derive(Debug, Default)]
pub struct Checklist {
    /// `None` until the model lists the changes.
    changes: Option<Vec<Change>>,
    /// The model made a workspace call without listing first: the turn goes on without the
    /// list.
    off: bool,
    /// A reply was already sent back once for changes still open.
    reply_refused: bool,
}

impl Checklist {
    /// Whether the list still steers the turn.
    pub fn active(&self) -> bool {
        !self.off
    }

    /// Whether the next request asks for the list. That request carries no workspace
    /// snapshot: read after the workspace, the 1.5B model listed what the workspace showed
    /// instead of what the person asked for (docs/EVAL.md, C1).
    pub fn awaiting_list(&self) -> bool {
        !self.off && self.changes.is_none()
    }

    /// Takes the model's list; the answer the model is told.
    pub fn take(&mut self, call: &ToolCallRequest) -> Result<String, String> {
        if self.off {
            return Err(
                "not needed now: go on with the request, then call reply_to_user".to_string(),
            );
        }
        if let Some(changes) = &self.changes {
            let made = changes.len();
            // Listing again instead of acting is a try at the open change: a model that keeps
            // listing moves through the list to the reply rather than round in place.
            self.after_call(Effect::Nothing);
            return Err(format!(
                "the list is already made ({made} changes): do not list again; {}",
                self.next_words()
            ));
        }
        let listed = changes(call)?;
        self.changes = Some(
            listed
                .into_iter()
                .map(|text| Change {
                    text,
                    state: State::Open,
                    tries: 0,
                })
                .collect(),
        );
        Ok(format!("listed. {}", self.next_words()))
    }

    /// Notes what a workspace call did: a change made closes the open change; a call that
    /// changed nothing counts as a try, and after [`TRIES_PER_CHANGE`] the loop goes on.
    pub fn after_call(&mut self, effect: Effect) {
        let Some(changes) = &mut self.changes else {
            // Acting before listing: the turn goes on as it would without the list.
            self.off = true;
            return;
        };
        let Some(change) = changes.iter_mut().find(|c| c.state == State::Open) else {
            return;
        };
        match effect {
            Effect::Changed | Effect::RepeatedDone => change.state = State::Done,
            Effect::Read => {}
            Effect::RepeatedNothing => change.state = State::GaveUp,
            Effect::Nothing => {
                change.tries += 1;
                if change.tries >= TRIES_PER_CHANGE {
                    change.state = State::GaveUp;
                }
            }
        }
    }

    /// Whether a reply now comes too early: changes are still open and no reply was sent
    /// back for that before. Sending one back marks it, so the model's next reply goes out.
    pub fn refuse_reply(&mut self) -> Option<String> {
        if self.off || self.reply_refused {
            return None;
        }
        let changes = self.changes.as_ref()?;
        let (number, change) = changes
            .iter()
            .enumerate()
            .find(|(_, c)| c.state == State::Open)?;
        self.reply_refused = true;
        Some(format!(
            "not sent yet: change {} of {} (\"{}\") is not made. Make it with the workspace \
             tools first; if it needs no tool or cannot be done, call reply_to_user again and \
             say so.",
            number + 1,
            changes.len(),
            change.text
        ))
    }

    /// The note read last in the next request: list first, then the change to make now, then
    /// the reply. (Quoting the person's message here, with an example item, made the 1.5B
    /// model copy the example into its list: docs/EVAL.md, C2.)
    pub fn note(&self) -> Option<String> {
        if self.off {
            return None;
        }
        Some(format!(
            "[Note from haico, not from the person: {}]",
            match &self.changes {
                None => "first call list_changes with each change the person's message asks \
                         for, one short item each (an empty list if it only asks a question). \
                         The workspace is shown once the list is made."
                    .to_string(),
                Some(_) => self.next_words(),
            }
        ))
    }

    /// What to do next, in words.
    fn next_words(&self) -> String {
        let Some(changes) = &self.changes else {
            return String::new();
        };
        if changes.is_empty() {
            return "the message asks for no change: call reply_to_user with your answer."
                .to_string();
        }
        match changes.iter().position(|c| c.state == State::Open) {
            Some(open) => {
                let mut words = format!(
                    "now make change {} of {}: \"{}\". Make it with a workspace tool call, using \
                     the numbers the workspace shows now.",
                    open + 1,
                    changes.len(),
                    changes[open].text
                );
                if open > 0 {
                    words.push_str(&format!(
                        " Change{} {} {} handled: do not make {} again.",
                        if open > 1 { "s" } else { "" },
                        numbers(open),
                        if open > 1 { "are" } else { "is" },
                        if open > 1 { "them" } else { "it" },
                    ));
                }
                words
            }
            None => {
                let gave_up: Vec<&str> = changes
                    .iter()
                    .filter(|c| c.state == State::GaveUp)
                    .map(|c| c.text.as_str())
                    .collect();
                let mut words = String::from(
                    "every change on the list is handled. Call reply_to_user now: say in one or \
                     two sentences what you changed",
                );
                if !gave_up.is_empty() {
                    words.push_str(&format!(
                        ", and that this was not done: \"{}\"",
                        gave_up.join("\"; \"")
                    ));
                }
                words.push('.');
                words
            }
        }
    }
}

/// "1", "1 and 2", "1 to 3".
fn numbers(count: usize) -> String {
    match count {
        1 => "1".to_string(),
        2 => "1 and 2".to_string(),
        n => format!("1 to {n}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::NOTHING_CHANGED;

    fn listing(arguments: Value) -> ToolCallRequest {
        ToolCallRequest {
            id: "l1".into(),
            name: NAME.into(),
            arguments: arguments.to_string(),
        }
    }

    #[test]
    fn the_list_is_read_trimmed_without_duplicates_and_bounded() {
        let got = changes(&listing(
            json!({"changes": ["  Balcony  a must ", "", "Balcony a must", "No parking"]}),
        ))
        .unwrap();
        assert_eq!(got, ["Balcony a must", "No parking"]);
        let many: Vec<String> = (0..20).map(|i| format!("change {i}")).collect();
        assert_eq!(
            changes(&listing(json!({ "changes": many }))).unwrap().len(),
            MAX_CHANGES
        );
        assert!(changes(&listing(json!({}))).unwrap_err().contains("list"));
        assert!(
            changes(&listing(json!({"changes": [1]})))
                .unwrap_err()
                .contains("text")
        );
        let cut = ToolCallRequest {
            id: "l2".into(),
            name: NAME.into(),
            arguments: "{\"changes\": [\"a".into(),
        };
        assert!(changes(&cut).unwrap_err().contains("JSON"));
    }

    #[test]
    fn changes_are_named_one_at_a_time_then_the_reply() {
        let mut list = Checklist::default();
        assert!(list.note().unwrap().contains("first call list_changes"));
        assert!(list.awaiting_list());
        let answer = list
            .take(&listing(
                json!({"changes": ["Tick chapter 1", "Drop the video course", "Rename the exams"]}),
            ))
            .unwrap();
        assert!(
            answer.contains("change 1 of 3: \"Tick chapter 1\""),
            "{answer}"
        );
        assert!(!list.awaiting_list());
        list.after_call(Effect::Read);
        assert!(list.note().unwrap().contains("change 1 of 3"));
        list.after_call(Effect::Changed);
        let note = list.note().unwrap();
        assert!(
            note.contains("change 2 of 3: \"Drop the video course\""),
            "{note}"
        );
        assert!(note.contains("Change 1 is handled"), "{note}");
        // Two calls that changed nothing: the loop goes on, and the reply says so.
        list.after_call(Effect::Nothing);
        assert!(list.note().unwrap().contains("change 2 of 3"));
        list.after_call(Effect::Nothing);
        let note = list.note().unwrap();
        assert!(
            note.contains("change 3 of 3") && note.contains("Changes 1 and 2 are"),
            "{note}"
        );
        list.after_call(Effect::RepeatedDone);
        let note = list.note().unwrap();
        assert!(note.contains("Call reply_to_user now"), "{note}");
        assert!(
            note.contains("not done: \"Drop the video course\""),
            "{note}"
        );
        assert!(
            list.take(&listing(json!({"changes": []})))
                .unwrap_err()
                .contains("already")
        );
        let mut again = Checklist::default();
        again
            .take(&listing(
                json!({"changes": ["Move the party", "Invite Ana"]}),
            ))
            .unwrap();
        again.take(&listing(json!({"changes": ["x"]}))).unwrap_err();
        let twice = again.take(&listing(json!({"changes": ["x"]}))).unwrap_err();
        assert!(
            twice.contains("change 2 of 2"),
            "listing twice gave the change up: {twice}"
        );
    }

    #[test]
    fn a_repeat_of_a_call_that_did_nothing_gives_the_change_up_at_once() {
        let mut list = Checklist::default();
        list.take(&listing(
            json!({"changes": ["Move the party", "Invite Ana"]}),
        ))
        .unwrap();
        list.after_call(Effect::Nothing);
        list.after_call(Effect::RepeatedNothing);
        let note = list.note().unwrap();
        assert!(note.contains("change 2 of 2"), "{note}");
        let nothing = Envelope::ok(format!("{NOTHING_CHANGED}it already reads so"));
        assert_eq!(effect(&nothing, false, false, false), Effect::Nothing);
        assert_eq!(
            effect(&Envelope::ok("set"), false, false, false),
            Effect::Changed
        );
        assert_eq!(
            effect(&Envelope::ok("3 steps"), true, false, false),
            Effect::Read
        );
        assert_eq!(
            effect(&Envelope::failure("no"), false, true, false),
            Effect::RepeatedNothing
        );
        assert_eq!(
            effect(&Envelope::failure("no"), false, true, true),
            Effect::RepeatedDone
        );
        assert_eq!(
            effect(&Envelope::failure("no"), false, false, false),
            Effect::Nothing
        );
    }

    #[test]
    fn a_question_lists_nothing_and_is_answered() {
        let mut list = Checklist::default();
        let answer = list.take(&listing(json!({"changes": []}))).unwrap();
        assert!(answer.contains("no change"), "{answer}");
        assert_eq!(list.refuse_reply(), None);
    }

    #[test]
    fn an_early_reply_is_sent_back_once() {
        let mut list = Checklist::default();
        list.take(&listing(
            json!({"changes": ["Add a balcony preference", "Drop parking"]}),
        ))
        .unwrap();
        list.after_call(Effect::Changed);
        let refusal = list.refuse_reply().unwrap();
        assert!(
            refusal.contains("change 2 of 2 (\"Drop parking\")"),
            "{refusal}"
        );
        assert_eq!(list.refuse_reply(), None, "the second reply goes out");
    }

    #[test]
    fn acting_before_listing_turns_the_list_off() {
        let mut list = Checklist::default();
        list.after_call(Effect::Changed);
        assert!(!list.active());
        assert_eq!(list.note(), None);
        assert_eq!(list.refuse_reply(), None);
        assert!(list.take(&listing(json!({"changes": ["x"]}))).is_err());
    }
}
