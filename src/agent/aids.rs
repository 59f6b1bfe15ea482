//! Help for small models (`HAICO_LLM_AIDS`), each aid on its own so it can be switched and
//! measured on its own. A small local model loses track of what it already did, answers a
//! change request with prose, and reads a long tool list poorly; a hosted model needs none of
//! this, so every aid is off unless the person asks for it, and a hosted provider's requests
//! read exactly as before.
//!
//! Each aid changes the head of the prompt (the instructions or the tool list) only as a
//! function of the setting, so the head stays byte-identical for one configuration and a
//! prompt cache keeps it.

use std::fmt;

use super::model::ToolDefinition;

/// Which aids are on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Aids {
    /// Leave out the tools that only read what the workspace snapshot already shows
    /// (`list_todos`, `list_preferences`, `list_artifacts`) and the whole-document rewrite
    /// (`update_document`): a shorter head, fewer ways to spend a step ([`compact`]).
    pub compact_tools: bool,
    /// Short worked examples in the instructions.
    pub examples: bool,
    /// When a change request's first answer changed nothing, ask once more, requiring a tool
    /// call.
    pub ask_to_act: bool,
    /// The snapshot ends with the request being worked on and what this turn did so far, call
    /// by call.
    pub turn_notes: bool,
    /// Earlier turns come back with the calls they made, not as prose only.
    pub history_calls: bool,
    /// The model replies to the person with a tool call (`reply_to_user`), and every request
    /// requires a call ([`super::reply`]).
    pub reply_tool: bool,
    /// The turn begins with the model listing the changes asked for, and the loop names them
    /// one at a time ([`super::checklist`]); only with `reply_tool`.
    pub checklist: bool,
}

/// The aids by the names the setting uses, in the order they are listed.
const NAMES: [&str; 7] = [
    "compact-tools",
    "examples",
    "ask-to-act",
    "turn-notes",
    "history-calls",
    "reply-tool",
    "checklist",
];

impl Aids {
    /// Every aid that helped the local model, which is every aid but `checklist`.
    pub const ALL: Self = Self {
        compact_tools: true,
        examples: true,
        ask_to_act: true,
        turn_notes: true,
        history_calls: true,
        reply_tool: true,
        // Measured worse with the 1.5B local model (docs/EVAL.md, C1 and C2): on only when
        // named (`all,checklist`).
        checklist: false,
    };

    fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "compact-tools" => &mut self.compact_tools,
            "examples" => &mut self.examples,
            "ask-to-act" => &mut self.ask_to_act,
            "turn-notes" => &mut self.turn_notes,
            "history-calls" => &mut self.history_calls,
            "reply-tool" => &mut self.reply_tool,
            "checklist" => &mut self.checklist,
            _ => return None,
        })
    }

    fn is_on(&self, name: &str) -> bool {
        let mut copy = *self;
        copy.flag(name).is_some_and(|on| *on)
    }
}

impl std::str::FromStr for Aids {
    type Err = String;

    /// `none`, `all`, or a comma-separated list of aid names; `-name` takes one away, so
    /// `all,-examples` is every aid but the examples.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut aids = Self::default();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let word = word.to_ascii_lowercase();
            match word.as_str() {
                "none" => aids = Self::default(),
                "all" => aids = Self::ALL,
                _ => {
                    let (name, on) = match word.strip_prefix('-') {
                        Some(name) => (name, false),
                        None => (word.as_str(), true),
                    };
                    match aids.flag(name) {
                        Some(flag) => *flag = on,
                        None => {
                            return Err(format!(
                                "`{name}` is not an aid: use none, all, or some of {} (a leading \
                                 - takes one away, e.g. all,-examples)",
                                NAMES.join(", ")
                            ));
                        }
                    }
                }
            }
        }
        Ok(aids)
    }
}

impl fmt::Display for Aids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on: Vec<&str> = NAMES.into_iter().filter(|name| self.is_on(name)).collect();
        if on.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&on.join(","))
        }
    }
}

/// The read-only tools whose content the snapshot already shows; the compact tool set leaves
/// them out (`get_artifact` stays: the snapshot lists artifacts, not their data).
fn shown_in_snapshot(tool: &str) -> bool {
    matches!(tool, "list_todos" | "list_preferences" | "list_artifacts")
}

/// The compact tool set (`compact-tools`): without the tools that read what the snapshot shows,
/// and without `update_document`. A small model reaches for the whole-document rewrite for
/// nearly everything (in the evaluation's traces it rewrote the document to change the
/// objective, to drop plan steps and to fix one word, each time losing text), even listed
/// last; `append_to_document` writes a new document and `edit_document` changes one, so the
/// rewrite is the one tool a small model is better without.
///
/// The order is the full set's: moving `edit_document` first sent one fix to the right tool
/// but turned other tasks' first calls to wrong ones (docs/EVAL.md, R4).
pub fn compact(definitions: &mut Vec<ToolDefinition>) {
    definitions.retain(|tool| !shown_in_snapshot(&tool.name) && tool.name != "update_document");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_set_drops_the_reads_and_the_rewrite() {
        let tool = |name: &str| ToolDefinition {
            name: name.into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        };
        let mut tools: Vec<ToolDefinition> = [
            "update_document",
            "edit_document",
            "list_todos",
            "add_todos",
            "list_preferences",
            "list_artifacts",
            "get_artifact",
        ]
        .into_iter()
        .map(tool)
        .collect();
        compact(&mut tools);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["edit_document", "add_todos", "get_artifact"]);
        let head = crate::agent::prompt::instructions_for(Aids::ALL);
        assert!(!head.contains("update_document"), "{head}");
        assert!(head.contains("reply_to_user") && head.contains("Examples"));
        let full = crate::agent::prompt::instructions_for("examples".parse().unwrap());
        assert!(full.contains("update_document only to write"), "{full}");
        assert!(!full.contains("reply_to_user"));
    }

    #[test]
    fn names_lists_and_removals() {
        assert_eq!("none".parse::<Aids>().unwrap(), Aids::default());
        assert_eq!("".parse::<Aids>().unwrap(), Aids::default());
        assert_eq!("all".parse::<Aids>().unwrap(), Aids::ALL);
        let some: Aids = "turn-notes, ask-to-act".parse().unwrap();
        assert!(some.turn_notes && some.ask_to_act && !some.examples);
        let more: Aids = "all,checklist".parse().unwrap();
        assert!(more.checklist && more.reply_tool && !Aids::ALL.checklist);
        let most: Aids = "all,-examples".parse().unwrap();
        assert!(!most.examples && most.compact_tools);
        assert_eq!(
            most.to_string(),
            "compact-tools,ask-to-act,turn-notes,history-calls,reply-tool"
        );
        let err = "all,-exmaples".parse::<Aids>().unwrap_err();
        assert!(
            err.contains("exmaples") && err.contains("turn-notes"),
            "{err}"
        );
    }
}
