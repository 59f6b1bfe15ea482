//! `plan_step` and `plan_lacks`.

use super::*;

fn checklist() -> Workspace {
    let mut end = workspace();
    end.plan = vec![
        step("Code freeze", 0, true),
        step("QA", 0, false),
        step("iOS", 1, false),
        step("Smoke tests", 2, true),
        step("Payments", 2, false),
        step("Android", 1, false),
        step("Smoke tests", 2, false),
        step("Payments", 2, false),
        step("Submit to the App Store", 0, false),
    ];
    end
}

#[test]
fn plan_step_names_the_step_by_text_tick_depth_parent_and_path() {
    let end = checklist();
    assert!(on_end(
        r#"{"plan_step": {"text": ["freeze"], "done": true}}"#,
        &end
    ));
    assert!(on_end(
        r#"{"plan_step": {"text": ["payments"], "parent": ["android"]}}"#,
        &end
    ));
    assert!(on_end(
        r#"{"plan_step": {"text": ["smoke"], "path": ["ios", "qa"], "done": true, "depth": 2}}"#,
        &end
    ));
    // A flat step holds the whole path in its own text.
    assert!(on_end(
        r#"{"plan_step": {"text": [["app store", "apple"]], "path": [["submit", "store"]]}}"#,
        &end
    ));
    let undone = detail_on_end(
        r#"{"plan_step": {"text": ["smoke"], "path": ["android"], "done": true}}"#,
        &end,
    );
    assert!(!undone.passed);
    assert!(
        undone.detail.contains("2 steps have the text")
            && undone
                .detail
                .contains("step 4 \"Smoke tests\" is its outline path lacks \"android\"")
            && undone.detail.contains("step 7 \"Smoke tests\" is not done"),
        "{}",
        undone.detail
    );
    let misplaced = detail_on_end(
        r#"{"plan_step": {"text": ["qa"], "parent": ["ios"]}}"#,
        &end,
    );
    assert!(!misplaced.passed);
    assert!(
        misplaced.detail.contains("at the top"),
        "{}",
        misplaced.detail
    );
    let absent = detail_on_end(r#"{"plan_step": {"text": ["release notes"]}}"#, &end);
    assert!(!absent.passed);
    assert!(
        absent
            .detail
            .contains("no step has \"release notes\" among 9 steps")
    );
    assert!(!on_end(
        r#"{"plan_step": {"text": ["qa"], "depth": 1}}"#,
        &end
    ));
    assert!(!on_end(r#"{"plan_step": {"text": ["x"]}}"#, &workspace()));
}

#[test]
fn plan_lacks_names_the_step_that_is_still_there() {
    let end = checklist();
    assert!(on_end(r#"{"plan_lacks": ["live demo"]}"#, &end));
    assert!(on_end(r#"{"plan_lacks": ["smoke", "android"]}"#, &end));
    let still = detail_on_end(r#"{"plan_lacks": ["payments"]}"#, &end);
    assert!(!still.passed);
    assert!(
        still
            .detail
            .contains("step 5 \"Payments\"; step 8 \"Payments\""),
        "{}",
        still.detail
    );
    // An empty plan lacks everything: plan_lacks is a task check because a scenario's
    // starting plan holds the step to drop.
    assert!(on_end(r#"{"plan_lacks": ["x"]}"#, &workspace()));
}
