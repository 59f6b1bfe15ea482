//! The fairer `max_failed_calls` and `ended_by_model`, `answer_mentions`, and which checks
//! are guards.

use super::*;

#[test]
fn refused_repeats_and_repaired_calls_are_not_counted_as_failures() {
    let ok = json!({"success": true, "summary": "done"});
    let bad = json!({"success": false, "error": "`steps` is empty"});
    let repeat = json!({"success": false,
        "error": "this exact call (set_objective with the same arguments) was already made"});
    let turns = vec![turn(
        1,
        "completed",
        vec![
            call(1, "add_todos", json!({"steps": []}), bad.clone()),
            call(2, "add_todos", json!({"steps": [1]}), ok.clone()),
            call(3, "set_objective", json!({"objective": "a"}), ok.clone()),
            call(4, "set_objective", json!({"objective": "a"}), repeat),
            call(5, "add_todos", json!({"steps": []}), bad.clone()),
            call(6, "list_todos", json!({}), ok.clone()),
        ],
    )];
    let outcome = outcome_of(
        r#"{"max_failed_calls": 0}"#,
        &workspace(),
        &workspace(),
        &[],
        &turns,
        None,
    );
    assert!(!outcome.passed);
    assert!(
        outcome.detail.starts_with(
            "1 of 6 calls failed (at most 0) (not counted: 1 call refused as a repeat, 1 repaired \
             by the next call); first: turn 1 step 5 add_todos"
        ),
        "{}",
        outcome.detail
    );
    assert!(on_turns(r#"{"max_failed_calls": 1}"#, &turns));
    // A failure the next call does not repair (another tool, or it fails too) counts.
    let unrepaired = vec![turn(
        1,
        "completed",
        vec![
            call(1, "add_todos", json!({"steps": []}), bad.clone()),
            call(2, "add_todos", json!({"steps": [2]}), bad),
            call(3, "add_todos", json!({"steps": [3]}), ok),
        ],
    )];
    let outcome = outcome_of(
        r#"{"max_failed_calls": 0}"#,
        &workspace(),
        &workspace(),
        &[],
        &unrepaired,
        None,
    );
    assert!(
        outcome.detail.starts_with("1 of 3 calls failed"),
        "{}",
        outcome.detail
    );
}

#[test]
fn a_turn_the_loop_ended_was_not_ended_by_the_model() {
    let ok = json!({"success": true, "summary": "done"});
    let one = vec![call(1, "list_todos", json!({}), ok)];
    let turns = [answered(turn(1, "completed", one.clone()), "Done.")];
    let by_model = [turn_trace(
        1,
        vec![model_call(1, &["list_todos"]), model_call(2, &[])],
    )];
    let outcome = outcome_of(
        r#""ended_by_model""#,
        &workspace(),
        &workspace(),
        &[],
        &turns,
        Some(&by_model),
    );
    assert!(outcome.passed, "{}", outcome.detail);
    // Three failed rounds, or a repeat the model would not stop: the loop answers, below the
    // step limit, and only the trace can tell.
    let gave_up = [answered(
        turn(1, "completed", one.clone()),
        "I stopped here: my last 3 attempts to change the workspace all failed",
    )];
    let by_loop = [turn_trace(
        1,
        vec![
            model_call(1, &["list_todos"]),
            model_call(2, &["add_todos"]),
        ],
    )];
    let outcome = outcome_of(
        r#""ended_by_model""#,
        &workspace(),
        &workspace(),
        &[],
        &gave_up,
        Some(&by_loop),
    );
    assert!(!outcome.passed);
    assert!(
        outcome.detail.contains(
            "turn 1 ended by the loop, not the model: the model's last answer (call 2) still \
             asked for 1 tool call; the loop answered \"I stopped here"
        ),
        "{}",
        outcome.detail
    );
    let mut three = one.clone();
    three.push(call(
        2,
        "list_preferences",
        json!({}),
        json!({"success": true}),
    ));
    three.push(call(
        3,
        "list_artifacts",
        json!({}),
        json!({"success": true}),
    ));
    let limit = [turn(1, "completed", three)];
    let outcome = outcome_of(
        r#""ended_by_model""#,
        &workspace(),
        &workspace(),
        &[],
        &limit,
        Some(&by_loop),
    );
    assert!(
        outcome
            .detail
            .contains("stopped at the step limit (3 of 3 tool calls)"),
        "{}",
        outcome.detail
    );
    let failed_call = {
        let mut call = model_call(1, &[]);
        call.error = Some("connection reset".into());
        [turn_trace(1, vec![call])]
    };
    let outcome = outcome_of(
        r#""ended_by_model""#,
        &workspace(),
        &workspace(),
        &[],
        &turns,
        Some(&failed_call),
    );
    assert!(!outcome.passed && outcome.detail.contains("connection reset"));
    let silent = [turn_trace(1, Vec::new())];
    assert!(
        !outcome_of(
            r#""ended_by_model""#,
            &workspace(),
            &workspace(),
            &[],
            &turns,
            Some(&silent)
        )
        .passed
    );
}

#[test]
fn answer_mentions_reads_the_last_turns_answer() {
    let first = answered(
        turn(1, "completed", Vec::new()),
        "Both are locked; unlock them first.",
    );
    let second = answered(
        turn(2, "completed", Vec::new()),
        "Added the train requirement.",
    );
    let check = r#"{"answer_mentions": [["unlock", "unlocked"]]}"#;
    assert!(on_turns(check, std::slice::from_ref(&first)));
    let last = outcome_of(
        check,
        &workspace(),
        &workspace(),
        &[],
        &[first, second],
        None,
    );
    assert!(!last.passed);
    assert!(
        last.detail
            .contains("missing (\"unlock\" or \"unlocked\") in the last answer"),
        "{}",
        last.detail
    );
    let failed = outcome_of(
        check,
        &workspace(),
        &workspace(),
        &[],
        &[turn(1, "failed", Vec::new())],
        None,
    );
    assert!(!failed.passed && failed.detail.contains("has no answer"));
    assert!(!on_turns(check, &[]));
}

#[test]
fn guards_are_the_checks_that_hold_when_nothing_is_done() {
    let guards = [
        r#""locked_preferences_untouched""#,
        r#""no_locked_attempts""#,
        r#""no_repeated_calls""#,
        r#"{"max_failed_calls": 0}"#,
        r#""ended_by_model""#,
        r#""plan_no_duplicates""#,
        r#"{"document_keeps": ["x"]}"#,
    ];
    for text in guards {
        let check: Check = serde_json::from_str(text).unwrap();
        assert_eq!(check.kind(), CheckKind::Guard, "{text}");
    }
    for text in [
        r#""objective_set""#,
        r#"{"document_excludes": ["x"]}"#,
        r#"{"document_words": {"min": 1}}"#,
        r#"{"answer_mentions": ["x"]}"#,
        r#"{"chart": {"series_min": 1}}"#,
        r#"{"tools_used": ["x"]}"#,
    ] {
        let check: Check = serde_json::from_str(text).unwrap();
        assert_eq!(check.kind(), CheckKind::Task, "{text}");
    }
}
