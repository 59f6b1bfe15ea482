//! The snapshot of a turn about a person's selection (issue 25): the document with the
//! selected passage marked where it sits now, and a `<selection>` note telling the model the
//! request is about it (and, in suggest mode, that its changes must stay inside it).
//!
//! Only the snapshot — the last message of a request — changes; the instructions and the tool
//! list stay byte-identical, so a provider's prompt cache keeps them (SPEC §11). The marked
//! document is rendered for every call of such a turn and never kept in the [`PromptCache`]
//! (super::PromptCache), so the thread's next turn sees the document unmarked again.

use super::{PromptBudget, as_i64, document_open_tag, split_budget};
use haico_core::{
    workspace::DocumentMode, workspace::Focus, workspace::View, workspace::WorkspaceError,
    workspace::suggestions::Span,
};
use haico_store::Document;

/// The mark before the selected passage.
pub const OPEN_MARK: &str = "⟦selected⟧";
/// The mark after it.
pub const CLOSE_MARK: &str = "⟦/selected⟧";

/// Characters of context shown on each side of a passage that falls in the part of a long
/// document the budget leaves out.
const CONTEXT_CHARS: usize = 400;

/// What a turn about a selection shows instead of (and beside) the cached sections.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Focused {
    /// The `<document>` element with the passage marked; `None` keeps the cached one (the
    /// passage is gone, so there is nothing to mark).
    pub document: Option<String>,
    /// The `<selection>` element.
    pub note: String,
}

/// Reads the document and the mode in `view` and renders what the model sees of `focus`.
pub(super) async fn focused(
    view: &mut View,
    focus: &Focus,
    budget: &PromptBudget,
) -> Result<Focused, WorkspaceError> {
    let document = view.document().await?;
    let suggest = view.document_mode().await? == DocumentMode::Suggest;
    let found = document
        .as_ref()
        .and_then(|doc| focus.locate(&doc.content).map(|span| (doc, span)));
    Ok(match found {
        Some((doc, span)) => Focused {
            document: Some(marked_document(doc, span, budget)),
            note: note(Some((span, doc.version)), suggest),
        },
        None => Focused {
            document: None,
            note: note(None, suggest),
        },
    })
}

/// The `<selection>` element: where the passage is and what that means for this turn.
fn note(found: Option<(Span, i64)>, suggest: bool) -> String {
    let Some((span, version)) = found else {
        return "<selection>\nThe user's message in this turn is about a passage of the \
                document they selected (quoted in their message), but the document no longer \
                contains it: it was changed after they selected it. Tell the user, and change \
                nothing in the document on its account.\n</selection>\n\n"
            .to_string();
    };
    let scope = if suggest {
        " The thread is in suggest mode: in this turn, suggest changes to that passage only \
         (edit_document, quoting text from inside it); a change anywhere else is refused."
    } else {
        ""
    };
    format!(
        "<selection>\nThe user's message in this turn is about the passage marked \
         {OPEN_MARK}…{CLOSE_MARK} in the document above (characters {}-{} of version {version}). \
         The two marks are not part of the document: never copy them into a tool's \
         arguments.{scope}\n</selection>\n\n",
        span.start, span.end
    )
}

/// The `<document>` element with the marks around `span`: the whole body when it fits the
/// budget; otherwise its head and tail as usual, plus the passage with some context around it
/// where it falls between them, each gap saying how much is left out.
fn marked_document(doc: &Document, span: Span, budget: &PromptBudget) -> String {
    let body = doc.content.as_str();
    let total = body.chars().count();
    let (head, tail) = split_budget(budget.document_chars);
    let (head, tail) = (
        usize::try_from(head).unwrap_or(0),
        usize::try_from(tail).unwrap_or(0),
    );
    let mut ranges = if total <= head + tail {
        vec![(0, total)]
    } else {
        vec![
            (0, head),
            (
                span.start.saturating_sub(CONTEXT_CHARS),
                (span.end + CONTEXT_CHARS).min(total),
            ),
            (total - tail, total),
        ]
    };
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (from, to) in ranges {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    // Every position the rendering cuts at, turned into bytes in one pass.
    let mut cuts: Vec<usize> = merged
        .iter()
        .flat_map(|&(from, to)| [from, to])
        .chain([span.start, span.end])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let bytes = bytes_at(body, &cuts);
    let byte = |at: usize| {
        cuts.binary_search(&at)
            .ok()
            .and_then(|i| bytes.get(i).copied())
            .unwrap_or(body.len())
    };
    let mut out = String::with_capacity(body.len().min(4 * budget.document_chars) + 512);
    out.push_str(&document_open_tag(&doc.title));
    let mut shown_to = 0usize;
    for (from, to) in merged {
        if from > shown_to {
            out.push_str(&format!(
                "\n[… {} characters of the document omitted here; it is {} characters long …]\n",
                as_i64(from - shown_to),
                as_i64(total)
            ));
        }
        if (from..=to).contains(&span.start) && span.end <= to {
            out.push_str(&body[byte(from)..byte(span.start)]);
            out.push_str(OPEN_MARK);
            out.push_str(&body[byte(span.start)..byte(span.end)]);
            out.push_str(CLOSE_MARK);
            out.push_str(&body[byte(span.end)..byte(to)]);
        } else {
            out.push_str(&body[byte(from)..byte(to)]);
        }
        shown_to = to;
    }
    if shown_to < total {
        out.push_str(&format!(
            "\n[… {} characters of the document omitted here; it is {} characters long …]\n",
            as_i64(total - shown_to),
            as_i64(total)
        ));
    }
    out.push_str("\n</document>\n\n");
    out
}

/// The byte offsets of the code points `positions` (sorted, each at most the text's length)
/// of `text`, in one pass.
fn bytes_at(text: &str, positions: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(positions.len());
    let mut wanted = positions.iter().peekable();
    for (index, (byte, _)) in text.char_indices().enumerate() {
        while wanted.next_if(|&&at| at == index).is_some() {
            out.push(byte);
        }
        if wanted.peek().is_none() {
            return out;
        }
    }
    out.resize(positions.len(), text.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(content: &str) -> Document {
        Document {
            title: "T".to_string(),
            content: content.to_string(),
            version: 3,
        }
    }

    #[test]
    fn a_short_document_is_shown_whole_with_the_marks() {
        let rendered = marked_document(
            &doc("Intro. A very long sentence."),
            Span { start: 9, end: 18 },
            &PromptBudget::default(),
        );
        assert!(
            rendered.contains("Intro. A ⟦selected⟧very long⟦/selected⟧ sentence."),
            "{rendered}"
        );
    }

    #[test]
    fn a_passage_in_the_cut_middle_is_shown_with_its_context() {
        let body = format!("{}NEEDLE{}", "a".repeat(5_000), "b".repeat(5_000));
        let budget = PromptBudget {
            document_chars: 300,
            ..PromptBudget::default()
        };
        let rendered = marked_document(
            &doc(&body),
            Span {
                start: 5_000,
                end: 5_006,
            },
            &budget,
        );
        assert!(
            rendered.contains("⟦selected⟧NEEDLE⟦/selected⟧"),
            "{rendered}"
        );
        assert_eq!(
            rendered
                .matches("characters of the document omitted")
                .count(),
            2
        );
        assert!(rendered.chars().count() < 300 + 2 * CONTEXT_CHARS + 400);
    }

    #[test]
    fn bytes_of_code_points() {
        assert_eq!(bytes_at("héllo", &[0, 2, 5]), vec![0, 3, 6]);
    }
}
