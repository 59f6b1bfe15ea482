//! When the agent asks the model a second time within one step of a turn, and what it says.
//!
//! Two habits of small models cost a turn: answering a change request with prose about the
//! change instead of making it, and calling a write they already made, again and again, until
//! the step limit. For the first the agent asks once more, requiring a tool call (the server
//! enforces it: llama.cpp turns `tool_choice: required` into a grammar); for the second it asks
//! for the answer to the person, and ends the turn itself if the model calls a tool again.
//! Each ask is a short note in the conversation, appended after what the model saw, so the
//! prompt only grows and a prompt cache keeps all of it.
//!
//! The answer is not forced with `tool_choice: none`: llama.cpp renders a request with that
//! choice without its tool list, so the whole prompt after the instructions would be read
//! anew (measured: 97 of 217 tokens from the cache with `none`, 216 of 217 with `required`).

use super::model::ToolChoice;

/// What the next request asks beyond the model's own choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SecondAsk {
    /// Nothing: the model decides.
    #[default]
    None,
    /// A change request got prose only: make the changes now, with a tool.
    Act,
    /// The model repeated a write it made: answer the person now, in text (asked by the note;
    /// a call instead ends the turn).
    Answer,
}

impl SecondAsk {
    /// The request's `tool_choice`.
    pub fn tool_choice(self) -> ToolChoice {
        match self {
            Self::None => ToolChoice::Auto,
            Self::Act => ToolChoice::Required,
            Self::Answer => ToolChoice::Auto,
        }
    }
}

/// The note that asks for the changes after a first answer in prose.
pub const ACT_NOTE: &str = "[Note from haico, not from the person: your answer changed nothing \
in the workspace, but the request asks for changes. Make them now with the tools (the shared \
panels are what the person keeps), then answer in one or two sentences.]";

/// The note that asks for the answer after a repeated write.
pub const ANSWER_NOTE: &str = "[Note from haico, not from the person: you repeated a call that \
was already done. Do not call any more tools in this turn. Answer the person now in one or two \
sentences: say what you changed, and what, if anything, they must do (for example unlock a \
preference).]";

/// The note that asks for the reply after a repeated write, when the model replies with
/// [`reply_to_user`](super::reply::NAME).
pub const REPLY_NOTE: &str = "[Note from haico, not from the person: you repeated a call that \
was already done. Call no other tool in this turn: call reply_to_user now with one or two \
sentences: what you changed, and what, if anything, the person must do (for example unlock a \
preference).]";

/// The note after a repeat of a call that failed or changed nothing: the same call cannot do
/// more, so it points away from it. `repeated` says what was repeated
/// ([`Repeat::for_person`](super::progress::Repeat::for_person)).
pub fn repeat_note(repeated: &str, reply_tool: bool) -> String {
    let answer = if reply_tool {
        "call reply_to_user"
    } else {
        "answer the person"
    };
    format!(
        "[Note from haico, not from the person: you called {repeated}. The same call cannot do \
         more: do not make it again in this turn. Do what the request still needs with another \
         tool, or {answer}.]"
    )
}

/// Words that ask for a change to the workspace. A message with one of them, or one that is not
/// a question, is a change request.
const ACTION_WORDS: &[&str] = &[
    "add", "update", "change", "drop", "remove", "delete", "set", "plan", "write", "draft", "make",
    "create", "chart", "tick", "mark", "record", "fix", "replace", "move", "rename", "reword",
    "put", "scale", "tailor", "show", "note", "track", "list", "outline", "edit", "correct",
    "rewrite", "prepare", "organise", "organize", "compare", "lock", "keep",
];

/// Whether `message` asks for changes rather than only asking a question: a message that
/// does not end with a question mark, or that uses a word asking for a change ("add", "drop",
/// "chart", …). "Where do we stand?" is a pure question; "Can you help us plan it?" is not.
pub fn asks_for_changes(message: &str) -> bool {
    let trimmed = message.trim();
    if !trimmed.ends_with('?') {
        return true;
    }
    let lower = trimmed.to_lowercase();
    lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|word| ACTION_WORDS.contains(&word))
}

/// Whether the model's answer asks the person something back (it then waits for them, and
/// asking it to act would be wrong).
pub fn asks_back(answer: &str) -> bool {
    answer.trim_end().ends_with('?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_and_requests() {
        assert!(!asks_for_changes("Where do we stand on the talk?"));
        assert!(!asks_for_changes("What is a good budget for Lisbon?"));
        assert!(asks_for_changes("Can you help us plan it?"));
        assert!(asks_for_changes(
            "Where do we stand? Also, drop the live demo steps."
        ));
        assert!(asks_for_changes("Code freeze is done."));
        assert!(asks_back("Which dates suit you?"));
        assert!(!asks_back("Done: the plan has five steps."));
    }

    #[test]
    fn each_ask_chooses_its_tool_choice() {
        assert_eq!(SecondAsk::None.tool_choice(), ToolChoice::Auto);
        assert_eq!(SecondAsk::Act.tool_choice(), ToolChoice::Required);
        assert_eq!(SecondAsk::Answer.tool_choice(), ToolChoice::Auto);
    }
}
