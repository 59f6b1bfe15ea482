//! A change of the document as a value: what `update_document`, `append_to_document` and
//! `edit_document` ask for, checked once ([`DocumentChange::check`]) and applied once
//! ([`DocumentChange::applied_to`]) whichever path takes it. In `direct` mode the agent's write
//! applies it to the document; in `suggest` mode it is stored as the suggestion
//! ([`DocumentChange::suggested_edits`]), and accepting the suggestion applies the very same
//! value, read back from the row ([`DocumentChange::of_suggestion`]). The texts a model reads
//! when a change does not fit are written here once, worded for the path that refused it
//! ([`DocumentMode`]: written, or suggested).
//!
//! An in-place edit replaces exact passages of the body: each must occur exactly once where it
//! is applied, so a model that quotes too little, or misquotes, is told which edit failed and
//! why instead of changing the wrong place.

use std::borrow::Cow;

#[cfg(test)]
use super::MAX_DOCUMENT_TITLE_CHARS;
use super::{MAX_DOCUMENT_CHARS, check_replacement};
use crate::{
    workspace::error::WorkspaceError, workspace::rules::char_count, workspace::rules::check_length,
    workspace::rules::check_no_nul, workspace::rules::require_batch,
};
use haico_store::{Document, DocumentMode, SuggestedEdit, Suggestion, SuggestionKind};

/// One targeted change of the body: the passage `old_text`, which must occur exactly once in
/// the body as it stands when the change is applied, becomes `new_text` (empty: deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEdit<'a> {
    /// The exact passage to replace; never empty.
    pub old_text: &'a str,
    /// What takes its place.
    pub new_text: &'a str,
}

/// A change of the document, in one of its three shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentChange<'a> {
    /// A whole new body, and a new title when one is given (`update_document`).
    Replace {
        /// The new body (may be empty).
        body: &'a str,
        /// The new title; `None` keeps the current one.
        title: Option<&'a str>,
        /// The body this rewrite is for, when it is for that body only: a suggestion's, made
        /// on one body, since it rewrites everything. `None`: whatever the body is (the direct
        /// write, which holds the row from its read to its write).
        replaces: Option<&'a str>,
    },
    /// Text added at the end of the body (`append_to_document`).
    Append {
        /// The text; never empty.
        text: Cow<'a, str>,
    },
    /// Exact passages replaced in place, in order, all or none (`edit_document`).
    Edits(Vec<TextEdit<'a>>),
}

impl<'a> DocumentChange<'a> {
    /// Which tool it stands for, as a suggestion records it.
    pub fn kind(&self) -> SuggestionKind {
        match self {
            DocumentChange::Replace { .. } => SuggestionKind::Replace,
            DocumentChange::Append { .. } => SuggestionKind::Append,
            DocumentChange::Edits(_) => SuggestionKind::Edit,
        }
    }

    /// The title it sets, trimmed as stored; `None` keeps the current one. Its length is
    /// [`check`](Self::check)ed.
    pub fn title(&self) -> Option<&'a str> {
        match self {
            DocumentChange::Replace { title, .. } => title.map(str::trim),
            _ => None,
        }
    }

    /// Checks the change itself, before the body is read: the limits of its texts, a text to
    /// append, at least one edit and a passage to find in each.
    pub fn check(&self) -> Result<(), WorkspaceError> {
        match self {
            DocumentChange::Replace { body, title, .. } => check_replacement(body, *title, None),
            DocumentChange::Append { text } => {
                if text.is_empty() {
                    return Err(WorkspaceError::invalid(
                        "`text` is empty: pass the text to append",
                    ));
                }
                check_length(text, "text", MAX_DOCUMENT_CHARS)
            }
            DocumentChange::Edits(edits) => check_text_edits(edits),
        }
    }

    /// Checks the document it is to change (`None`: there is none yet): edits need text to
    /// edit. `mode` says whether it is to be written or suggested.
    pub fn check_target(
        &self,
        document: Option<&Document>,
        mode: DocumentMode,
    ) -> Result<(), WorkspaceError> {
        let DocumentChange::Edits(_) = self else {
            return Ok(());
        };
        let verb = match mode {
            DocumentMode::Direct => "write",
            DocumentMode::Suggest => "suggest",
        };
        match document {
            None if mode == DocumentMode::Direct => Err(WorkspaceError::invalid(
                "there is no document yet: create it first with update_document or \
                 append_to_document",
            )),
            Some(document) if !document.content.is_empty() => Ok(()),
            _ => Err(WorkspaceError::invalid(format!(
                "the document is empty, so there is no text to edit: {verb} it with \
                 update_document or append_to_document"
            ))),
        }
    }

    /// The body after the change, or why it does not apply to `body`: an edit's passage that
    /// does not occur exactly once, or a rewrite made on another body. The change must have
    /// passed [`check`](Self::check).
    pub fn applied_to(&self, body: &str) -> Result<String, WorkspaceError> {
        match self {
            DocumentChange::Replace {
                body: new,
                replaces,
                ..
            } => match replaces {
                Some(made_on) if *made_on != body => Err(WorkspaceError::invalid(
                    "it rewrites the whole document, which has changed since it was made",
                )),
                _ => Ok(new.to_string()),
            },
            DocumentChange::Append { text } => {
                let mut out = String::with_capacity(body.len() + text.len());
                out.push_str(body);
                out.push_str(text);
                Ok(out)
            }
            DocumentChange::Edits(edits) => apply_text_edits(body, edits),
        }
    }

    /// Refuses a body of `chars` characters after the change when that is past
    /// [`MAX_DOCUMENT_CHARS`], saying that nothing was `mode`'s (written, or suggested).
    pub fn check_size(&self, chars: usize, mode: DocumentMode) -> Result<(), WorkspaceError> {
        if chars <= MAX_DOCUMENT_CHARS {
            return Ok(());
        }
        Err(WorkspaceError::invalid(match (mode, self) {
            (DocumentMode::Suggest, _) => format!(
                "the document would be {chars} characters long with this suggestion; the limit \
                 is {MAX_DOCUMENT_CHARS}"
            ),
            (DocumentMode::Direct, DocumentChange::Append { text }) => format!(
                "the document would grow past {MAX_DOCUMENT_CHARS} characters; shorten it with \
                 update_document first (this {}-character append was not applied)",
                char_count(text)
            ),
            // A whole body past the limit is refused by `check` already.
            (DocumentMode::Direct, _) => format!(
                "the document would be {chars} characters long after these edits; the limit is \
                 {MAX_DOCUMENT_CHARS} (no edit was applied)"
            ),
        }))
    }

    /// The edits a suggestion of this change stores, made on `body`: a rewrite's single edit
    /// from that body to the new one, an append's from nothing to its text, or the edits
    /// themselves. [`of_suggestion`](Self::of_suggestion) reads them back.
    pub fn suggested_edits(&self, body: &str) -> Vec<SuggestedEdit> {
        let edit = |old_text: &str, new_text: &str| SuggestedEdit {
            old_text: old_text.to_string(),
            new_text: new_text.to_string(),
        };
        match self {
            DocumentChange::Replace {
                body: new,
                replaces,
                ..
            } => vec![edit(replaces.unwrap_or(body), new)],
            DocumentChange::Append { text } => vec![edit("", text)],
            DocumentChange::Edits(edits) => {
                edits.iter().map(|e| edit(e.old_text, e.new_text)).collect()
            }
        }
    }

    /// The change a stored suggestion keeps, as [`suggested_edits`](Self::suggested_edits)
    /// stored it: a rewrite for the body it was made on only. (A rewrite without its edit, which
    /// only a hand-made recording could hold, changes nothing.)
    pub fn of_suggestion(suggestion: &'a Suggestion) -> Self {
        let edits = &suggestion.edits;
        match suggestion.kind {
            SuggestionKind::Replace => match edits.first() {
                Some(edit) => DocumentChange::Replace {
                    body: &edit.new_text,
                    title: suggestion.title.as_deref(),
                    replaces: Some(&edit.old_text),
                },
                None => DocumentChange::Edits(Vec::new()),
            },
            SuggestionKind::Append => DocumentChange::Append {
                text: match edits.as_slice() {
                    [edit] => Cow::Borrowed(edit.new_text.as_str()),
                    _ => Cow::Owned(edits.iter().map(|edit| edit.new_text.as_str()).collect()),
                },
            },
            SuggestionKind::Edit => DocumentChange::Edits(
                edits
                    .iter()
                    .map(|edit| TextEdit {
                        old_text: &edit.old_text,
                        new_text: &edit.new_text,
                    })
                    .collect(),
            ),
        }
    }
}

/// Checks a batch of edits before the body is read: at least one, each with a passage to find.
fn check_text_edits(edits: &[TextEdit<'_>]) -> Result<(), WorkspaceError> {
    require_batch(edits, "edits")?;
    for (i, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(WorkspaceError::invalid(format!(
                "edit {}: old_text is empty; copy the exact passage to change from the document \
                 (to add at the end, use append_to_document)",
                i + 1
            )));
        }
        check_no_nul(edit.old_text, &format!("edits[{i}].old_text"))?;
        check_no_nul(edit.new_text, &format!("edits[{i}].new_text"))?;
    }
    Ok(())
}

/// Where `needle` (not empty) occurs in `body` when it occurs exactly once; otherwise how many
/// times it occurs (0, or at least 2). Overlapping occurrences count as several, since either
/// could be the one meant; their number reported is that of the non-overlapping ones, at
/// least 2. At most three linear scans, whatever the text.
fn locate_once(body: &str, needle: &str) -> Result<usize, usize> {
    let Some(first) = body.find(needle) else {
        return Err(0);
    };
    let next = first + body[first..].chars().next().map_or(1, char::len_utf8);
    match body[next..].find(needle) {
        None => Ok(first),
        Some(_) => Err(body.matches(needle).count().max(2)),
    }
}

/// The body after `edits`, each applied in order to the result of the ones before, or the
/// first edit whose passage does not occur exactly once, named by its 1-based index. The
/// batch must have passed [`check_text_edits`].
fn apply_text_edits(body: &str, edits: &[TextEdit<'_>]) -> Result<String, WorkspaceError> {
    let mut text = body.to_string();
    for (i, edit) in edits.iter().enumerate() {
        match locate_once(&text, edit.old_text) {
            Ok(at) => text.replace_range(at..at + edit.old_text.len(), edit.new_text),
            Err(count) => return Err(not_once(i + 1, count)),
        }
    }
    Ok(text)
}

/// The error for edit `n` (1-based) whose passage occurs `count` times, not once. From the
/// second edit on, it says that the edits before it count and that none was applied, so the
/// model neither quotes the old text nor assumes half the batch went through.
fn not_once(n: usize, count: usize) -> WorkspaceError {
    let after = match n {
        1 => String::new(),
        2 => " as edit 1 left it".to_string(),
        _ => format!(" as edits 1-{} left it", n - 1),
    };
    let problem = match count {
        0 => format!(
            "old_text was not found in the document{after}; copy it exactly from the document \
             as it is now"
        ),
        _ => format!(
            "old_text occurs {count} times in the document{after}; include more surrounding \
             text so it matches exactly once"
        ),
    };
    let untouched = if n > 1 {
        " (no edit of this call was applied)"
    } else {
        ""
    };
    WorkspaceError::invalid(format!("edit {n}: {problem}{untouched}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use haico_store::SuggestionStatus;

    fn edit<'a>(old_text: &'a str, new_text: &'a str) -> TextEdit<'a> {
        TextEdit { old_text, new_text }
    }

    fn edits<'a>(list: &[TextEdit<'a>]) -> DocumentChange<'a> {
        DocumentChange::Edits(list.to_vec())
    }

    fn replace(body: &str) -> DocumentChange<'_> {
        DocumentChange::Replace {
            body,
            title: None,
            replaces: None,
        }
    }

    fn append(text: &str) -> DocumentChange<'_> {
        DocumentChange::Append { text: text.into() }
    }

    fn document(content: &str) -> Document {
        Document {
            title: "T".to_string(),
            content: content.to_string(),
            version: 3,
        }
    }

    /// The body after the change, checked first as every path does, or the error text.
    fn applied(body: &str, change: &DocumentChange<'_>) -> Result<String, String> {
        change.check().map_err(|e| e.to_string())?;
        change.applied_to(body).map_err(|e| e.to_string())
    }

    /// The error text, or nothing when the change applied (which every check then rejects).
    fn refused(body: &str, change: &DocumentChange<'_>) -> String {
        applied(body, change).err().unwrap_or_default()
    }

    #[test]
    fn edits_apply_in_order_each_to_the_result_of_the_last() {
        let body = "alpha beta gamma";
        assert_eq!(
            applied(
                body,
                &edits(&[edit("beta", "BETA"), edit("BETA gamma", "delta")])
            )
            .as_deref(),
            Ok("alpha delta")
        );
        assert_eq!(
            applied(body, &edits(&[edit(" beta", "")])).as_deref(),
            Ok("alpha gamma")
        );
        assert_eq!(
            applied("héllo 👋 wörld", &edits(&[edit("👋", "🙂🙂")])).as_deref(),
            Ok("héllo 🙂🙂 wörld")
        );
    }

    #[test]
    fn a_passage_must_occur_exactly_once() {
        assert_eq!(
            applied("a b a", &edits(&[edit("a", "x")])),
            Err(
                "edit 1: old_text occurs 2 times in the document; include more surrounding \
                 text so it matches exactly once"
                    .to_string()
            )
        );
        assert_eq!(
            applied("a b c", &edits(&[edit("b", "B"), edit("zz", "")])),
            Err(
                "edit 2: old_text was not found in the document as edit 1 left it; copy it \
                 exactly from the document as it is now (no edit of this call was applied)"
                    .to_string()
            )
        );
        let e = refused("x x x", &edits(&[edit("x", "y")]));
        assert!(e.starts_with("edit 1: old_text occurs 3 times"), "{e}");
        let e = refused(
            "a b c",
            &edits(&[edit("a", "A"), edit("b", "B"), edit("a", "")]),
        );
        assert!(
            e.contains("edit 3") && e.contains("as edits 1-2 left it"),
            "{e}"
        );
        // Overlapping occurrences are several, not one.
        let e = refused("aaa", &edits(&[edit("aa", "b")]));
        assert!(e.contains("occurs 2 times"), "{e}");
        assert_eq!(locate_once("aaaa", "aa"), Err(2));
        assert_eq!(locate_once("日本語", "本"), Ok(3));
        assert_eq!(locate_once("abc", "abcd"), Err(0));
    }

    #[test]
    fn batches_are_checked_whole_before_the_body_is_read() {
        let e = refused("x", &edits(&[]));
        assert!(e.contains("`edits` is empty"), "{e}");
        let e = refused("x", &edits(&[edit("x", "y"), edit("", "y")]));
        assert!(e.starts_with("edit 2: old_text is empty"), "{e}");
        let e = refused("x", &edits(&[edit("x", "a\0b")]));
        assert!(
            e.contains("`edits[0].new_text`") && e.contains("NUL"),
            "{e}"
        );
    }

    #[test]
    fn a_replacement_is_checked_and_replaces_whatever_body_it_is_given() {
        assert_eq!(applied("old", &replace("new")).as_deref(), Ok("new"));
        assert_eq!(applied("old", &replace("")).as_deref(), Ok(""));
        let titled = DocumentChange::Replace {
            body: "b",
            title: Some("  Trip  "),
            replaces: None,
        };
        assert_eq!(titled.title(), Some("Trip"));
        assert_eq!(replace("b").title(), None);
        assert_eq!(append("b").title(), None);
        let long_title = "t".repeat(MAX_DOCUMENT_TITLE_CHARS + 1);
        let e = refused(
            "",
            &DocumentChange::Replace {
                body: "b",
                title: Some(&long_title),
                replaces: None,
            },
        );
        assert!(e.contains("`title`"), "{e}");
        let e = refused("", &replace("a\0b"));
        assert!(e.contains("`content`") && e.contains("NUL"), "{e}");
    }

    #[test]
    fn a_rewrite_made_on_one_body_applies_to_that_body_only() {
        let made_on = DocumentChange::Replace {
            body: "new",
            title: None,
            replaces: Some("old"),
        };
        assert_eq!(applied("old", &made_on).as_deref(), Ok("new"));
        assert_eq!(
            applied("old, edited", &made_on),
            Err("it rewrites the whole document, which has changed since it was made".to_string())
        );
    }

    #[test]
    fn an_append_needs_text_and_adds_it_at_the_end() {
        assert_eq!(applied("a", &append("\nb")).as_deref(), Ok("a\nb"));
        assert_eq!(applied("", &append("b")).as_deref(), Ok("b"));
        assert_eq!(
            refused("a", &append("")),
            "`text` is empty: pass the text to append"
        );
        let e = refused("a", &append("x\0"));
        assert!(e.contains("`text`") && e.contains("NUL"), "{e}");
    }

    #[test]
    fn edits_need_a_document_with_text_worded_for_the_path() {
        let change = edits(&[edit("a", "b")]);
        let refusal = |document: Option<&Document>, mode| {
            change
                .check_target(document, mode)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            refusal(None, DocumentMode::Direct),
            "there is no document yet: create it first with update_document or \
             append_to_document"
        );
        assert_eq!(
            refusal(Some(&document("")), DocumentMode::Direct),
            "the document is empty, so there is no text to edit: write it with \
             update_document or append_to_document"
        );
        for empty in [None, Some(document(""))] {
            assert_eq!(
                refusal(empty.as_ref(), DocumentMode::Suggest),
                "the document is empty, so there is no text to edit: suggest it with \
                 update_document or append_to_document"
            );
        }
        assert!(
            change
                .check_target(Some(&document("a")), DocumentMode::Direct)
                .is_ok()
        );
        for other in [replace("x"), append("x")] {
            for mode in DocumentMode::ALL {
                assert!(other.check_target(None, *mode).is_ok());
            }
        }
    }

    #[test]
    fn a_body_past_the_limit_is_refused_in_the_words_of_the_path() {
        let over = MAX_DOCUMENT_CHARS + 1;
        let refusal = |change: &DocumentChange<'_>, mode| {
            change
                .check_size(over, mode)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            refusal(&append("abc"), DocumentMode::Direct),
            format!(
                "the document would grow past {MAX_DOCUMENT_CHARS} characters; shorten it with \
                 update_document first (this 3-character append was not applied)"
            )
        );
        assert_eq!(
            refusal(&edits(&[edit("a", "b")]), DocumentMode::Direct),
            format!(
                "the document would be {over} characters long after these edits; the limit is \
                 {MAX_DOCUMENT_CHARS} (no edit was applied)"
            )
        );
        for change in [append("abc"), edits(&[edit("a", "b")]), replace("x")] {
            assert_eq!(
                refusal(&change, DocumentMode::Suggest),
                format!(
                    "the document would be {over} characters long with this suggestion; the \
                     limit is {MAX_DOCUMENT_CHARS}"
                )
            );
            assert!(
                change
                    .check_size(MAX_DOCUMENT_CHARS, DocumentMode::Direct)
                    .is_ok()
            );
        }
    }

    /// A stored suggestion of `change`, made on `body`.
    fn stored(change: &DocumentChange<'_>, body: &str) -> Suggestion {
        Suggestion {
            id: 1,
            status: SuggestionStatus::Open,
            kind: change.kind(),
            turn_index: 1,
            by: None,
            action_and_reasoning: None,
            base_version: 1,
            title: change.title().map(str::to_string),
            edits: change.suggested_edits(body),
            created_at: chrono::Utc::now(),
            decided_at: None,
            decided_by: None,
            diff: None,
        }
    }

    #[test]
    fn a_suggestion_keeps_the_change_and_applies_it_the_same_way() {
        let body = "alpha beta";
        let titled = DocumentChange::Replace {
            body: "gamma",
            title: Some("New"),
            replaces: None,
        };
        for change in [
            titled,
            append(" gamma"),
            edits(&[edit("beta", "gamma"), edit("alpha", "A")]),
        ] {
            let suggestion = stored(&change, body);
            let back = DocumentChange::of_suggestion(&suggestion);
            assert_eq!(back.kind(), change.kind());
            assert_eq!(back.title(), change.title());
            assert_eq!(back.applied_to(body).ok(), change.applied_to(body).ok());
            assert_eq!(back.suggested_edits(body), suggestion.edits);
        }
        // The stored rows read as before: a rewrite's edit goes from the body it was made on.
        let suggestion = stored(&replace("new"), "old");
        assert_eq!(suggestion.kind, SuggestionKind::Replace);
        assert_eq!(
            (
                suggestion.edits[0].old_text.as_str(),
                suggestion.edits[0].new_text.as_str()
            ),
            ("old", "new")
        );
        let read = DocumentChange::of_suggestion(&suggestion);
        assert!(read.applied_to("other").is_err());
        let suggestion = stored(&append("x"), "old");
        assert_eq!(
            (suggestion.kind, suggestion.edits[0].old_text.as_str()),
            (SuggestionKind::Append, "")
        );
        // Hand-made rows: an append of several texts adds them all; a rewrite without its edit
        // changes nothing.
        let mut several = stored(&append("x"), "");
        several.edits.push(SuggestedEdit {
            old_text: String::new(),
            new_text: "y".to_string(),
        });
        assert_eq!(
            DocumentChange::of_suggestion(&several)
                .applied_to("a")
                .ok()
                .as_deref(),
            Some("axy")
        );
        let mut bare = stored(&replace("x"), "");
        bare.edits.clear();
        assert_eq!(
            DocumentChange::of_suggestion(&bare)
                .applied_to("a")
                .ok()
                .as_deref(),
            Some("a")
        );
    }
}
