//! The guard against an agent's whole rewrite silently dropping the person's text.
//!
//! A small model asked for one correction to a letter may answer with `update_document` and
//! only the corrected sentence, replacing the whole letter. So a rewrite of a substantial body
//! ([`SUBSTANTIAL_CHARS`] or [`SUBSTANTIAL_WORDS`]) must keep at least [`MIN_KEPT_PERCENT`] of
//! its words, counted with repeats (a word the old body has three times is kept three times only
//! when the new body has it three times), case aside, in any order. A real rewrite that
//! reorders, rewords some sentences and keeps the facts passes; a replacement by a fragment
//! does not. The caller decides whether the rule applies: the agent's direct write, unless it
//! says it means to replace everything (`replace_all`).

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet},
};

use crate::{workspace::error::WorkspaceError, workspace::rules::char_count};

/// A body this long (in characters) is substantial: losing most of it unasked is a loss.
pub const SUBSTANTIAL_CHARS: usize = 300;
/// A body with this many words is substantial too, however short its words.
pub const SUBSTANTIAL_WORDS: usize = 40;
/// The share of the old body's words, in percent, a rewrite must keep.
pub const MIN_KEPT_PERCENT: usize = 50;
/// How many of the lost lines the refusal quotes.
const QUOTED_LINES: usize = 2;
/// How much of each lost line it quotes, in characters.
const QUOTE_CHARS: usize = 60;

/// What a rewrite keeps of the body it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// Words in the old body.
    pub old_words: usize,
    /// Of those, how many the new body still has.
    pub kept_words: usize,
}

impl Kept {
    /// The share kept, in whole percent (100 when there was nothing to keep).
    pub fn percent(self) -> usize {
        (self.kept_words * 100)
            .checked_div(self.old_words)
            .unwrap_or(100)
    }
}

/// The words of `text`: runs of letters and digits, lower-cased (borrowed when already so).
fn words(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            if word.chars().any(char::is_uppercase) {
                Cow::Owned(word.to_lowercase())
            } else {
                Cow::Borrowed(word)
            }
        })
}

/// How many of `old`'s words `new` keeps, repeats counted.
pub fn measure(old: &str, new: &str) -> Kept {
    let mut left: HashMap<Cow<'_, str>, usize> = HashMap::new();
    let mut old_words = 0;
    for word in words(old) {
        *left.entry(word).or_default() += 1;
        old_words += 1;
    }
    let mut kept_words = 0;
    for word in words(new) {
        if let Some(count) = left.get_mut(&word)
            && *count > 0
        {
            *count -= 1;
            kept_words += 1;
        }
    }
    Kept {
        old_words,
        kept_words,
    }
}

/// Whether a body is long enough that losing most of it matters.
fn substantial(body: &str, words: usize) -> bool {
    words >= SUBSTANTIAL_WORDS || char_count(body) >= SUBSTANTIAL_CHARS
}

/// The first lines of `old` (trimmed, not blank) that `new` no longer has, each cut short.
fn lost_lines(old: &str, new: &str) -> Vec<String> {
    let kept: HashSet<&str> = new.lines().map(str::trim).collect();
    old.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !kept.contains(line))
        .take(QUOTED_LINES)
        .map(|line| {
            if char_count(line) > QUOTE_CHARS {
                let cut: String = line.chars().take(QUOTE_CHARS).collect();
                format!("\"{}…\"", cut.trim_end())
            } else {
                format!("\"{line}\"")
            }
        })
        .collect()
}

/// Refuses a rewrite of a substantial `old` body by `new` that keeps less than
/// [`MIN_KEPT_PERCENT`] of its words; the error says what would be lost and what to do.
pub fn check_rewrite(old: &str, new: &str) -> Result<(), WorkspaceError> {
    let kept = measure(old, new);
    if !substantial(old, kept.old_words) || kept.percent() >= MIN_KEPT_PERCENT {
        return Ok(());
    }
    let lost = lost_lines(old, new);
    let example = if lost.is_empty() {
        String::new()
    } else {
        format!(" It would lose, for example, {}.", lost.join(" and "))
    };
    Err(WorkspaceError::invalid(format!(
        "update_document would drop most of the document: it has {} characters and {} words, \
         and the new content ({} characters) keeps only {} of those words ({}%).{example} \
         Nothing was changed. To change part of the document use edit_document, to add to it \
         use append_to_document; to really replace all of it, call update_document again with \
         replace_all: true.",
        char_count(old),
        kept.old_words,
        char_count(new),
        kept.kept_words,
        kept.percent()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short letter of a few paragraphs (about 600 characters, 100 words).
    const LETTER: &str = "Dear Ms Keller,\n\n\
        Thank you for your offer of 12 March for the renovation of our kitchen. We have read it \
        carefully and would like to accept it, with two changes.\n\n\
        First, the new worktop should be oak rather than laminate, as we discussed on the phone. \
        Second, we would like the work to start on 3 June instead of 27 May, because we are away \
        the week before.\n\n\
        Please send us a revised offer with these changes, and let us know whether the total of \
        8,400 EUR still holds. We are happy to pay the deposit as soon as we have it.\n\n\
        Kind regards,\nAnna and Tom Berger\n";

    fn refused(old: &str, new: &str) -> String {
        check_rewrite(old, new)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_fragment_in_place_of_a_letter_is_refused() {
        let fragment = "The worktop should be oak, not laminate.";
        assert_eq!(char_count(fragment), 40);
        assert_eq!(
            refused(LETTER, fragment),
            "update_document would drop most of the document: it has 560 characters and 110 \
             words, and the new content (40 characters) keeps only 6 of those words (5%). It \
             would lose, for example, \"Dear Ms Keller,\" and \"Thank you for your offer of 12 \
             March for the renovation of o…\". Nothing was changed. To change part of the \
             document use edit_document, to add to it use append_to_document; to really \
             replace all of it, call update_document again with replace_all: true."
        );
        // Emptying it is the same loss.
        assert!(refused(LETTER, "").contains("keeps only 0 of those words (0%)"));
    }

    #[test]
    fn a_rewrite_that_keeps_the_facts_passes() {
        // One sentence changed.
        let corrected = LETTER.replace("27 May", "20 May");
        assert!(check_rewrite(LETTER, &corrected).is_ok());
        // Reordered and partly reworded, the facts kept.
        let reworded = "Dear Ms Keller,\n\n\
            We would like to accept your offer of 12 March for the renovation of our kitchen, \
            with two changes. Please send us a revised offer, and let us know whether the total \
            of 8,400 EUR still holds; we will pay the deposit as soon as we have it.\n\n\
            1. The new worktop should be oak rather than laminate, as we discussed.\n\
            2. The work should start on 3 June instead of 27 May: we are away the week before.\n\n\
            Kind regards,\nAnna and Tom Berger\n";
        let kept = measure(LETTER, reworded);
        assert_eq!(kept.percent(), 77, "{kept:?}");
        assert!(check_rewrite(LETTER, reworded).is_ok());
        // Growing it keeps everything.
        assert!(check_rewrite(LETTER, &format!("{LETTER}\nP.S. Thanks again.\n")).is_ok());
    }

    #[test]
    fn short_bodies_are_not_guarded() {
        let short = "Day 1: museum.\nDay 2: beach.\n";
        assert!(check_rewrite(short, "Something else entirely").is_ok());
        assert!(check_rewrite("", "anything").is_ok());
        // Forty short words are substantial however few characters they take.
        let many = "a b c d e f g h i j ".repeat(4);
        assert!(char_count(&many) < SUBSTANTIAL_CHARS);
        assert!(!refused(&many, "z").is_empty());
        // So are 300 characters of few long words.
        let long = "Donaudampfschifffahrtsgesellschaftskapitän ".repeat(7);
        assert!(char_count(&long) >= SUBSTANTIAL_CHARS);
        assert!(!refused(&long, "z").is_empty());
    }

    #[test]
    fn words_are_counted_with_repeats_case_aside() {
        assert_eq!(
            measure("Oak oak OAK pine", "oak pine pine"),
            Kept {
                old_words: 4,
                kept_words: 2
            }
        );
        assert_eq!(measure("Ünïcode wörds", "ünïcode WÖRDS").kept_words, 2);
        assert_eq!(measure("", "x").percent(), 100);
        assert_eq!(
            lost_lines("keep\n\n  gone  \nalso gone\nthird\n", "keep\n"),
            ["\"gone\"", "\"also gone\""]
        );
    }
}
