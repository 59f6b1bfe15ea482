//! Checks judged on the document: what it holds (anywhere or in one section), what it no
//! longer holds, what it kept from the start, and how long it is.

use super::*;

pub(super) fn document_contains(end: &Workspace, wanted: &DocumentTerms) -> (bool, String) {
    let Some(document) = &end.document else {
        return (false, "there is no document".into());
    };
    let size = document.content.chars().count();
    match wanted {
        DocumentTerms::Anywhere(terms) => {
            let absent = missing(terms, &normalize(&document.content));
            if absent.is_empty() {
                (
                    true,
                    format!("found {} ({size} characters)", plural(terms.len(), "term")),
                )
            } else {
                (
                    false,
                    format!("missing {} ({size} characters)", absent.join(", ")),
                )
            }
        }
        DocumentTerms::InSection(scoped) => in_section(&document.content, scoped),
    }
}

/// `document_contains` in one section: passes when some section whose heading holds the
/// section terms holds every term.
fn in_section(content: &str, scoped: &SectionTerms) -> (bool, String) {
    let all = sections(content);
    let matching: Vec<&Section> = all
        .iter()
        .filter(|s| holds_all(&scoped.section, &normalize(&s.heading)))
        .collect();
    if matching.is_empty() {
        let headings: Vec<String> = all.iter().map(|s| quote(&s.heading)).collect();
        let seen = if headings.is_empty() {
            "it has no headings".to_string()
        } else {
            format!("its headings: {}", first_few(&headings))
        };
        return (
            false,
            format!(
                "no heading of the document has {}; {seen}",
                labels(&scoped.section)
            ),
        );
    }
    let mut best: Option<(&Section, Vec<String>)> = None;
    for section in matching {
        let absent = missing(&scoped.terms, &normalize(&section.text));
        if absent.is_empty() {
            return (
                true,
                format!(
                    "found {} in the section {} ({} characters)",
                    plural(scoped.terms.len(), "term"),
                    quote(&section.heading),
                    section.text.chars().count()
                ),
            );
        }
        if best
            .as_ref()
            .is_none_or(|(_, fewest)| absent.len() < fewest.len())
        {
            best = Some((section, absent));
        }
    }
    match best {
        Some((section, absent)) => (
            false,
            format!(
                "missing {} in the section {} ({} characters)",
                absent.join(", "),
                quote(&section.heading),
                section.text.chars().count()
            ),
        ),
        None => (false, "no section to judge".into()),
    }
}

/// A Markdown section: a heading line and what follows it up to the next heading of the same
/// or a higher level.
struct Section {
    heading: String,
    text: String,
}

/// Every section of `content`, nested ones included (a `##` section inside a `#` one is both
/// its own section and part of the outer one).
fn sections(content: &str) -> Vec<Section> {
    let lines: Vec<&str> = content.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(level) = heading_level(line) else {
            continue;
        };
        let end = lines
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, l)| heading_level(l).is_some_and(|other| other <= level))
            .map_or(lines.len(), |(j, _)| j);
        found.push(Section {
            heading: line.trim_start_matches('#').trim().to_string(),
            text: lines[i..end].join("\n"),
        });
    }
    found
}

/// The level of a Markdown heading line (`## Budget` → 2), `None` for other lines.
fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    let rest = &line[hashes..];
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with(' '))).then_some(hashes)
}

pub(super) fn document_excludes(end: &Workspace, texts: &[String]) -> (bool, String) {
    let Some(document) = &end.document else {
        return (
            false,
            "there is no document: nothing was written, so nothing was taken out".into(),
        );
    };
    let haystack = normalize(&document.content);
    let present: Vec<String> = texts
        .iter()
        .filter(|text| haystack.contains(&normalize(text)))
        .map(|text| format!("\"{text}\""))
        .collect();
    if present.is_empty() {
        (true, format!("none of {} present", texts.len()))
    } else {
        (false, format!("still present: {}", present.join(", ")))
    }
}

pub(super) fn document_keeps(start: &Workspace, end: &Workspace, terms: &[Term]) -> (bool, String) {
    if start.document.is_none() {
        return (
            false,
            "there was no starting document, so nothing could be kept".into(),
        );
    }
    let Some(document) = &end.document else {
        return (false, "the document is gone".into());
    };
    let absent = missing(terms, &normalize(&document.content));
    let size = document.content.chars().count();
    if absent.is_empty() {
        (
            true,
            format!(
                "kept {} of the starting document ({size} characters now)",
                plural(terms.len(), "term")
            ),
        )
    } else {
        (
            false,
            format!("lost {} ({size} characters now)", absent.join(", ")),
        )
    }
}

pub(super) fn document_words(end: &Workspace, range: WordRange) -> (bool, String) {
    let Some(document) = &end.document else {
        return (false, "there is no document".into());
    };
    let words = word_count(&document.content);
    let wanted = match (range.min, range.max) {
        (Some(min), Some(max)) => format!("from {min} to {max} wanted"),
        (Some(min), None) => format!("at least {min} wanted"),
        (None, Some(max)) => format!("at most {max} wanted"),
        (None, None) => "any length".to_string(),
    };
    let passed =
        range.min.is_none_or(|min| words >= min) && range.max.is_none_or(|max| words <= max);
    (passed, format!("{} ({wanted})", plural(words, "word")))
}

/// Words of Markdown text: runs between spaces that hold a letter or a digit (so `#`, `-`
/// and `|` do not count).
pub(super) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count()
}
