//! `document_contains` in a section, `document_keeps` and `document_words`.

use super::*;

fn cv() -> Workspace {
    let mut end = workspace();
    end.document = Some(Document {
        title: "CV".into(),
        content: "# Maria\n\n## Summary\nLogistics coordinator, five years.\n\n### Focus\nData \
                  analysis\n\n## Skills\nSQL, Python\n"
            .into(),
        version: 1,
    });
    end
}

#[test]
fn document_contains_can_look_in_one_section() {
    let end = cv();
    assert!(on_end(
        r#"{"document_contains": ["sql", "coordinator"]}"#,
        &end
    ));
    let summary = r#"{"document_contains": {"section": [["summary", "profile"]],
                                            "terms": ["coordinator", "data"]}}"#;
    // A nested heading belongs to the section above it.
    let found = detail_on_end(summary, &end);
    assert!(found.passed, "{}", found.detail);
    let sql = detail_on_end(
        r#"{"document_contains": {"section": ["summary"], "terms": ["sql"]}}"#,
        &end,
    );
    assert!(!sql.passed);
    assert!(
        sql.detail
            .contains("missing \"sql\" in the section \"Summary\""),
        "{}",
        sql.detail
    );
    let none = detail_on_end(
        r#"{"document_contains": {"section": ["budget"], "terms": ["total"]}}"#,
        &end,
    );
    assert!(!none.passed);
    assert!(
        none.detail
            .contains("no heading of the document has \"budget\""),
        "{}",
        none.detail
    );
}

#[test]
fn document_keeps_wants_the_starting_text_still_there() {
    let start = cv();
    let check = r#"{"document_keeps": ["five years", "sql"]}"#;
    assert!(judge(check, &start, &start, &[]));
    let mut rewritten = start.clone();
    if let Some(document) = &mut rewritten.document {
        document.content = "# Maria\n\nSQL and Python.".into();
    }
    let lost = outcome_of(check, &start, &rewritten, &[], &[], None);
    assert!(!lost.passed);
    assert!(
        lost.detail.starts_with("lost \"five years\""),
        "{}",
        lost.detail
    );
    assert_eq!(lost.kind, CheckKind::Guard);
    let gone = outcome_of(check, &start, &workspace(), &[], &[], None);
    assert!(!gone.passed && gone.detail.contains("gone"));
}

#[test]
fn document_words_counts_words_not_markup() {
    let end = cv();
    assert_eq!(super::super::document::word_count("# A b\n- c | 4"), 4);
    let words = detail_on_end(r#"{"document_words": {"min": 5, "max": 20}}"#, &end);
    assert!(words.passed, "{}", words.detail);
    assert!(
        words.detail.contains("12 words (from 5 to 20 wanted)"),
        "{}",
        words.detail
    );
    assert!(!on_end(r#"{"document_words": {"min": 50}}"#, &end));
    assert!(!on_end(r#"{"document_words": {"max": 3}}"#, &end));
    let nothing = detail_on_end(r#"{"document_words": {"max": 300}}"#, &workspace());
    assert!(!nothing.passed && nothing.detail.contains("no document"));
}
