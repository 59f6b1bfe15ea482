//! `preference` and `preference_lacks`.

use super::*;

fn preferences() -> Workspace {
    let mut end = workspace();
    let mut balcony = preference(1, "Balcony", false);
    balcony.kind = PreferenceKind::Soft;
    let mut park = preference(2, "Close to a park", false);
    park.subtitle = Some("Within 10 minutes' walk".into());
    park.kind = PreferenceKind::Soft;
    end.preferences = vec![preference(3, "Rent under 1,400 EUR", true), balcony, park];
    end
}

#[test]
fn preference_matches_title_subtitle_kind_and_lock() {
    let end = preferences();
    assert!(on_end(
        r#"{"preference": {"title": ["rent"], "kind": "hard", "locked": true}}"#,
        &end
    ));
    assert!(on_end(
        r#"{"preference": {"title": ["park", "10 min"]}}"#,
        &end
    ));
    let soft = detail_on_end(
        r#"{"preference": {"title": ["balcony"], "kind": "hard"}}"#,
        &end,
    );
    assert!(!soft.passed);
    assert!(
        soft.detail
            .contains("preference 2 \"Balcony\" is soft instead of hard"),
        "{}",
        soft.detail
    );
    assert!(!on_end(
        r#"{"preference": {"title": ["rent"], "locked": false}}"#,
        &end
    ));
    let absent = detail_on_end(r#"{"preference": {"title": ["train"]}}"#, &end);
    assert!(!absent.passed);
    assert!(
        absent.detail.contains("no preference has \"train\""),
        "{}",
        absent.detail
    );
}

#[test]
fn preference_lacks_names_what_is_still_there() {
    let end = preferences();
    assert!(on_end(r#"{"preference_lacks": ["parking"]}"#, &end));
    let still = detail_on_end(r#"{"preference_lacks": ["walk"]}"#, &end);
    assert!(!still.passed);
    assert!(
        still
            .detail
            .contains("preference 3 \"Close to a park\" (soft)"),
        "{}",
        still.detail
    );
}
