//! The working document: a title and a Markdown body, one per thread, with a version that
//! every write bumps so an editor can tell that someone else wrote meanwhile.
//!
//! Rules for both paths: the body (which may be empty) has at most [`MAX_DOCUMENT_CHARS`]
//! characters; a title is trimmed, then at most [`MAX_DOCUMENT_TITLE_CHARS`]; a write without
//! a title keeps the current one. A write may name the version it expects (0: "there is no
//! document yet"); the check is part of the SQL write, so it holds under concurrent writers.
//!
//! An in-place edit ([`Edit::edit_document`]) replaces exact passages of the body: each must
//! occur exactly once where it is applied, so a model that quotes too little, or misquotes,
//! is told which edit failed and why instead of changing the wrong place.
//!
//! An agent's whole rewrite ([`Edit::rewrite_document`]) must not silently drop most of a
//! substantial body ([`loss`]), and one that changes nothing writes nothing.

use super::{
    Edit, Source, WorkspaceError, Workspaces,
    rules::{char_count, check_length, check_no_nul, require_batch},
};
use crate::{ThreadId, store::Document};

pub mod loss;

/// The longest document body, in characters.
pub const MAX_DOCUMENT_CHARS: usize = 4_000_000;
/// The longest document title, in characters.
pub const MAX_DOCUMENT_TITLE_CHARS: usize = 300;

/// What a thread without a document shows: empty, version 0.
pub fn empty_document() -> Document {
    Document {
        title: String::new(),
        content: String::new(),
        version: 0,
    }
}

/// A title as stored: trimmed, within the limit; `None` keeps the current title.
pub(super) fn checked_title(title: Option<&str>) -> Result<Option<&str>, WorkspaceError> {
    match title {
        Some(title) => {
            let title = title.trim();
            check_length(title, "title", MAX_DOCUMENT_TITLE_CHARS)?;
            Ok(Some(title))
        }
        None => Ok(None),
    }
}

/// Checks a whole write before it touches the store.
pub(super) fn check_replacement(
    content: &str,
    title: Option<&str>,
    expected_version: Option<i64>,
) -> Result<(), WorkspaceError> {
    check_length(content, "content", MAX_DOCUMENT_CHARS)?;
    checked_title(title)?;
    if let Some(expected) = expected_version
        && expected < 0
    {
        return Err(WorkspaceError::invalid(format!(
            "`expected_version` is {expected}: versions start at 0 (no document yet)"
        )));
    }
    Ok(())
}

/// The size of the body after an append, and its new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// Characters in the whole body now.
    pub chars: usize,
    /// The new version.
    pub version: i64,
}

/// One targeted change of the body: the passage `old_text`, which must occur exactly once in
/// the body as it stands when the change is applied, becomes `new_text` (empty: deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEdit<'a> {
    /// The exact passage to replace; never empty.
    pub old_text: &'a str,
    /// What takes its place.
    pub new_text: &'a str,
}

/// What an in-place edit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentEdited {
    /// How many edits were applied.
    pub edits: usize,
    /// Characters in the whole body now.
    pub chars: usize,
    /// The version now.
    pub version: i64,
    /// Whether the body changed. Edits whose new text equals their old text leave it as it
    /// was; then nothing is written, so no revision is made.
    pub changed: bool,
}

/// What an agent's whole rewrite did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The document now.
    pub document: Document,
    /// Whether it changed. A rewrite to the body (and title) it already has writes nothing,
    /// so it makes no revision.
    pub changed: bool,
}

/// Checks a batch of edits before the body is read: at least one, each with a passage to find.
pub(super) fn check_text_edits(edits: &[TextEdit<'_>]) -> Result<(), WorkspaceError> {
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
pub(super) fn apply_text_edits(
    body: &str,
    edits: &[TextEdit<'_>],
) -> Result<String, WorkspaceError> {
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

impl Edit {
    /// Replaces the body (and the title, when one is given). With `expected_version` the
    /// write happens only while the document is still at that version; otherwise it fails
    /// with [`WorkspaceError::StaleDocument`] carrying the current document.
    pub async fn replace_document(
        &mut self,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let title = checked_title(title)?;
        let thread = self.thread_id();
        match self
            .repo()
            .documents()
            .put_document(&thread, content, title, expected_version)
            .await?
        {
            Some(document) => Ok(document),
            None => {
                let current = self
                    .repo()
                    .documents()
                    .get_document(&thread)
                    .await?
                    .unwrap_or_else(empty_document);
                Err(WorkspaceError::StaleDocument {
                    expected: expected_version.unwrap_or_default(),
                    current,
                })
            }
        }
    }

    /// Replaces the whole body (and the title, when one is given) as the agent's
    /// `update_document` does in direct mode. Unless `replace_all` is set, a rewrite that would
    /// drop most of a substantial body is refused ([`loss::check_rewrite`]), so a model that
    /// answers a small correction with a fragment cannot wipe the person's text; with it, the
    /// rewrite is written as asked. The row is held from the read to the write; a rewrite to
    /// the body and title the document already has writes nothing.
    pub async fn rewrite_document(
        &mut self,
        content: &str,
        title: Option<&str>,
        replace_all: bool,
    ) -> Result<Rewritten, WorkspaceError> {
        check_replacement(content, title, None)?;
        let thread = self.thread_id();
        if let Some(current) = self.repo().documents().document_for_edit(&thread).await? {
            let same_title = checked_title(title)?.is_none_or(|title| title == current.title);
            if current.content == content && same_title {
                return Ok(Rewritten {
                    document: current,
                    changed: false,
                });
            }
            if !replace_all {
                loss::check_rewrite(&current.content, content)?;
            }
        }
        let document = self.replace_document(content, title, None).await?;
        Ok(Rewritten {
            document,
            changed: true,
        })
    }

    /// Appends `text` to the body, creating the document when there is none. The text must
    /// not be empty, and the body must stay within [`MAX_DOCUMENT_CHARS`].
    pub async fn append_to_document(&mut self, text: &str) -> Result<Appended, WorkspaceError> {
        if text.is_empty() {
            return Err(WorkspaceError::invalid(
                "`text` is empty: pass the text to append",
            ));
        }
        check_length(text, "text", MAX_DOCUMENT_CHARS)?;
        let thread = self.thread_id();
        let written = self
            .repo()
            .documents()
            .append_document(&thread, text)
            .await?;
        let chars = usize::try_from(written.chars).unwrap_or(usize::MAX);
        if chars > MAX_DOCUMENT_CHARS {
            return Err(WorkspaceError::invalid(format!(
                "the document would grow past {MAX_DOCUMENT_CHARS} characters; shorten it with \
                 update_document first (this {}-character append was not applied)",
                char_count(text)
            )));
        }
        Ok(Appended {
            chars,
            version: written.version,
        })
    }

    /// Applies `edits` to the body in place, in order, all or none (see [`TextEdit`]). The
    /// document must exist and keep within [`MAX_DOCUMENT_CHARS`]. The row is held from the
    /// read to the write, and the new body is written by [`Edit::replace_document`], so the
    /// version, the history and the announcement are those of any other write.
    pub async fn edit_document(
        &mut self,
        edits: &[TextEdit<'_>],
    ) -> Result<DocumentEdited, WorkspaceError> {
        check_text_edits(edits)?;
        let thread = self.thread_id();
        let Some(document) = self.repo().documents().document_for_edit(&thread).await? else {
            return Err(WorkspaceError::invalid(
                "there is no document yet: create it first with update_document or \
                 append_to_document",
            ));
        };
        if document.content.is_empty() {
            return Err(WorkspaceError::invalid(
                "the document is empty, so there is no text to edit: write it with \
                 update_document or append_to_document",
            ));
        }
        let content = apply_text_edits(&document.content, edits)?;
        let chars = char_count(&content);
        if chars > MAX_DOCUMENT_CHARS {
            return Err(WorkspaceError::invalid(format!(
                "the document would be {chars} characters long after these edits; the limit is \
                 {MAX_DOCUMENT_CHARS} (no edit was applied)"
            )));
        }
        if content == document.content {
            return Ok(DocumentEdited {
                edits: edits.len(),
                chars,
                version: document.version,
                changed: false,
            });
        }
        let written = self
            .replace_document(&content, None, Some(document.version))
            .await?;
        Ok(DocumentEdited {
            edits: edits.len(),
            chars,
            version: written.version,
            changed: true,
        })
    }
}

impl Workspaces {
    /// A person replaces the document (see [`Edit::replace_document`]).
    pub async fn put_document(
        &self,
        thread: &ThreadId,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Document, WorkspaceError> {
        check_replacement(content, title, expected_version)?;
        let mut edit = self.edit(thread, Source::User).await?;
        let outcome = edit
            .replace_document(content, title, expected_version)
            .await;
        self.settle(edit, outcome, |document| {
            format!("edited the document (version {})", document.version)
        })
        .await
    }

    /// The document; an empty one at version 0 when none was written yet.
    pub async fn document(&self, thread: &ThreadId) -> Result<Document, WorkspaceError> {
        let document = {
            let mut view = self.view(thread).await?;
            let found = view.document().await;
            view.settle(found).await
        }?;
        Ok(document.unwrap_or_else(empty_document))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit<'a>(old_text: &'a str, new_text: &'a str) -> TextEdit<'a> {
        TextEdit { old_text, new_text }
    }

    fn applied(body: &str, edits: &[TextEdit<'_>]) -> Result<String, String> {
        check_text_edits(edits).map_err(|e| e.to_string())?;
        apply_text_edits(body, edits).map_err(|e| e.to_string())
    }

    /// The error text, or nothing when the edits applied (which every check then rejects).
    fn refused(body: &str, edits: &[TextEdit<'_>]) -> String {
        applied(body, edits).err().unwrap_or_default()
    }

    #[test]
    fn edits_apply_in_order_each_to_the_result_of_the_last() {
        let body = "alpha beta gamma";
        assert_eq!(
            applied(body, &[edit("beta", "BETA"), edit("BETA gamma", "delta")]).as_deref(),
            Ok("alpha delta")
        );
        assert_eq!(
            applied(body, &[edit(" beta", "")]).as_deref(),
            Ok("alpha gamma")
        );
        assert_eq!(
            applied("héllo 👋 wörld", &[edit("👋", "🙂🙂")]).as_deref(),
            Ok("héllo 🙂🙂 wörld")
        );
    }

    #[test]
    fn a_passage_must_occur_exactly_once() {
        assert_eq!(
            applied("a b a", &[edit("a", "x")]),
            Err(
                "edit 1: old_text occurs 2 times in the document; include more surrounding \
                 text so it matches exactly once"
                    .to_string()
            )
        );
        assert_eq!(
            applied("a b c", &[edit("b", "B"), edit("zz", "")]),
            Err(
                "edit 2: old_text was not found in the document as edit 1 left it; copy it \
                 exactly from the document as it is now (no edit of this call was applied)"
                    .to_string()
            )
        );
        let e = refused("x x x", &[edit("x", "y")]);
        assert!(e.starts_with("edit 1: old_text occurs 3 times"), "{e}");
        let e = refused("a b c", &[edit("a", "A"), edit("b", "B"), edit("a", "")]);
        assert!(
            e.contains("edit 3") && e.contains("as edits 1-2 left it"),
            "{e}"
        );
        // Overlapping occurrences are several, not one.
        let e = refused("aaa", &[edit("aa", "b")]);
        assert!(e.contains("occurs 2 times"), "{e}");
        assert_eq!(locate_once("aaaa", "aa"), Err(2));
        assert_eq!(locate_once("日本語", "本"), Ok(3));
        assert_eq!(locate_once("abc", "abcd"), Err(0));
    }

    #[test]
    fn batches_are_checked_whole_before_the_body_is_read() {
        let e = refused("x", &[]);
        assert!(e.contains("`edits` is empty"), "{e}");
        let e = refused("x", &[edit("x", "y"), edit("", "y")]);
        assert!(e.starts_with("edit 2: old_text is empty"), "{e}");
        let e = refused("x", &[edit("x", "a\0b")]);
        assert!(
            e.contains("`edits[0].new_text`") && e.contains("NUL"),
            "{e}"
        );
    }
}
