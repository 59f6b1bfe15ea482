//! What a transaction did to each panel, as the write methods record it: the raw material of a
//! revision.
//!
//! History stores, per revision and changed panel, either the panel's whole state or the
//! operations that turn the previous revision's state into this one. The write methods know
//! their own effect exactly (the row they touched, the position they inserted at, the text they
//! appended), so they record it here as they write; nothing has to read a panel back to find
//! out what changed. Lists record operations by item id where they can (an update, a removal,
//! a preference added in id order), so two people's concurrent preference edits replay in
//! commit order to the same list the table holds. The plan's positional inserts are safe
//! because every plan edit holds the thread.

use serde::{Deserialize, Serialize};

use crate::{models::Document, models::PlanStep, models::Preference, models::Suggestion};

/// One operation on a list panel (the plan, the preferences).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ListOp<T> {
    /// These items, in order, now start at position `at`.
    Insert {
        /// The position of the first.
        at: usize,
        /// The items.
        items: Vec<T>,
    },
    /// These items join the list where their id puts them (the list is ordered by id).
    Add {
        /// The items.
        items: Vec<T>,
    },
    /// The item with this item's id now reads like this.
    Update {
        /// The item as it is now.
        item: T,
    },
    /// The items with these ids are gone.
    Remove {
        /// Their ids.
        ids: Vec<i64>,
    },
    /// The list is now exactly this (a restore).
    Set {
        /// Every item, in order.
        items: Vec<T>,
    },
}

/// One operation on the document's body, in bytes of its UTF-8 text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum TextOp {
    /// `text` was added at the end.
    Append {
        /// The text added.
        text: String,
    },
    /// The body kept its first `head` and last `tail` bytes; `insert` replaced what lay
    /// between.
    Splice {
        /// Bytes kept at the start.
        head: usize,
        /// Bytes kept at the end.
        tail: usize,
        /// What replaces the middle.
        insert: String,
    },
}

/// The document's change: the operations on the body, and the title and version after them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentDelta {
    /// The title afterwards.
    pub title: String,
    /// The version afterwards.
    pub version: i64,
    /// The body's operations, in order.
    pub ops: Vec<TextOp>,
}

/// Something with a stable id, so list operations can find it.
pub trait HasId {
    /// The id.
    fn id(&self) -> i64;
}

impl HasId for PlanStep {
    fn id(&self) -> i64 {
        self.id
    }
}

impl HasId for Preference {
    fn id(&self) -> i64 {
        self.id
    }
}

/// What one transaction did to the panels, in the order it happened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Journal {
    /// The objective's final value, when it was written (`Some(None)`: removed).
    pub objective: Option<Option<String>>,
    /// The document: `Some(state)` when it was set whole (`None` inside: removed), or the body
    /// operations when it was edited in place.
    pub document: DocumentJournal,
    /// The plan's operations.
    pub plan: Vec<ListOp<PlanStep>>,
    /// The preferences' operations.
    pub preferences: Vec<ListOp<Preference>>,
    /// Artifacts stored.
    pub artifacts: Vec<i64>,
    /// The suggestions' operations: added, then decided.
    pub suggestions: Vec<ListOp<Suggestion>>,
    /// The document mode, when it was set.
    pub document_mode: Option<crate::panels::DocumentMode>,
}

/// How the document was changed in one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum DocumentJournal {
    /// Not at all.
    #[default]
    Untouched,
    /// Set whole (a restore, or a first write): the state after.
    Set(Option<Document>),
    /// Edited in place: the operations, and the title and version after them.
    Edited(DocumentDelta),
}

impl Journal {
    /// Records a set or removed objective.
    pub fn objective(&mut self, value: Option<String>) {
        self.objective = Some(value);
    }

    /// Records operations on the body, with the title and version they left.
    pub fn document_ops(&mut self, ops: Vec<TextOp>, title: String, version: i64) {
        match &mut self.document {
            DocumentJournal::Untouched => {
                self.document = DocumentJournal::Edited(DocumentDelta {
                    title,
                    version,
                    ops,
                });
            }
            DocumentJournal::Edited(delta) => {
                delta.ops.extend(ops);
                delta.title = title;
                delta.version = version;
            }
            DocumentJournal::Set(state) => {
                let mut doc = state.take().unwrap_or_else(empty_document);
                for op in &ops {
                    apply_text(&mut doc.content, op);
                }
                doc.title = title;
                doc.version = version;
                *state = Some(doc);
            }
        }
    }

    /// Records the document set whole (or removed).
    pub fn document_set(&mut self, state: Option<Document>) {
        self.document = DocumentJournal::Set(state);
    }
}

fn empty_document() -> Document {
    Document {
        title: String::new(),
        content: String::new(),
        version: 0,
    }
}

/// The operation that turns `old` into `new`: their common start and end are kept, the middle
/// replaced. Cut only at character boundaries, so the pieces stay valid text.
pub fn splice(old: &str, new: &str) -> TextOp {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(head) || !new.is_char_boundary(head) {
        head -= 1;
    }
    let max_tail = a.len().min(b.len()) - head;
    let mut tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take(max_tail)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - tail) || !new.is_char_boundary(b.len() - tail) {
        tail -= 1;
    }
    if head == a.len() && tail == 0 {
        return TextOp::Append {
            text: new[head..].to_string(),
        };
    }
    TextOp::Splice {
        head,
        tail,
        insert: new[head..b.len() - tail].to_string(),
    }
}

/// Applies one body operation. Offsets that do not fit (a corrupt record) are clamped to the
/// text and to character boundaries, so replaying never panics.
pub fn apply_text(content: &mut String, op: &TextOp) {
    match op {
        TextOp::Append { text } => content.push_str(text),
        TextOp::Splice { head, tail, insert } => {
            let len = content.len();
            let mut start = (*head).min(len);
            while !content.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = len.saturating_sub(*tail).max(start);
            while !content.is_char_boundary(end) {
                end += 1;
            }
            content.replace_range(start..end, insert);
        }
    }
}

/// Applies one list operation.
pub fn apply_list<T: HasId + Clone>(items: &mut Vec<T>, op: &ListOp<T>) {
    match op {
        ListOp::Insert { at, items: new } => {
            let at = (*at).min(items.len());
            items.splice(at..at, new.iter().cloned());
        }
        ListOp::Add { items: new } => {
            for item in new {
                let at = items.partition_point(|existing| existing.id() < item.id());
                items.insert(at, item.clone());
            }
        }
        ListOp::Update { item } => {
            if let Some(slot) = items.iter_mut().find(|existing| existing.id() == item.id()) {
                *slot = item.clone();
            }
        }
        ListOp::Remove { ids } => items.retain(|existing| !ids.contains(&existing.id())),
        ListOp::Set { items: new } => *items = new.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(old: &str, new: &str) {
        let op = splice(old, new);
        let mut text = old.to_string();
        apply_text(&mut text, &op);
        assert_eq!(text, new, "{old:?} → {new:?} via {op:?}");
    }

    #[test]
    fn splices_keep_what_did_not_change() {
        roundtrip("", "");
        roundtrip("", "abc");
        roundtrip("abc", "");
        roundtrip("hello world", "hello brave world");
        roundtrip("aaaa", "aa");
        roundtrip("aa", "aaaa");
        roundtrip("héllo wörld", "héllo wörld!");
        roundtrip("日本語のテキスト", "日本のテキスト");
        roundtrip("👋👋", "👋🙂👋");
        roundtrip("abcabc", "abc");
        assert_eq!(
            splice("hello", "hello, world"),
            TextOp::Append {
                text: ", world".into()
            }
        );
        assert_eq!(
            splice("a middle z", "a MIDDLE z"),
            TextOp::Splice {
                head: 2,
                tail: 2,
                insert: "MIDDLE".into()
            }
        );
    }

    #[test]
    fn corrupt_offsets_never_panic() {
        let mut text = "héllo".to_string();
        apply_text(
            &mut text,
            &TextOp::Splice {
                head: 2,
                tail: 99,
                insert: "x".into(),
            },
        );
        assert!(text.starts_with('h'));
    }

    #[test]
    fn list_ops_replay() {
        let step = |id: i64, text: &str| PlanStep {
            id,
            text: text.into(),
            depth: 0,
            done: false,
        };
        let mut plan = Vec::new();
        apply_list(
            &mut plan,
            &ListOp::Insert {
                at: 0,
                items: vec![step(1, "a"), step(2, "b")],
            },
        );
        apply_list(
            &mut plan,
            &ListOp::Insert {
                at: 1,
                items: vec![step(7, "x")],
            },
        );
        apply_list(&mut plan, &ListOp::Update { item: step(2, "B") });
        apply_list(&mut plan, &ListOp::Remove { ids: vec![1] });
        let texts: Vec<&str> = plan.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["x", "B"]);
        let mut ordered = vec![step(3, "c")];
        apply_list(
            &mut ordered,
            &ListOp::Add {
                items: vec![step(5, "e"), step(1, "a")],
            },
        );
        let ids: Vec<i64> = ordered.iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, 3, 5]);
    }
}
