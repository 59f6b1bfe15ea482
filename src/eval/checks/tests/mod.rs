//! Unit tests of every check, on hand-built workspaces, artifacts, turns and traces. The
//! checks added with task checks and guards have a module each.

use chrono::Utc;
use serde_json::json;

use super::*;
use crate::eval::trace::{ModelCallTrace, ToolCallTrace, TurnTrace};
use haico_store::panels::PreferenceKind;
use haico_store::{ArtifactSummary, Document, MessageRecord};

mod charts;
mod document;
mod plan;
mod preferences;
mod turns;

fn step(text: &str, depth: i64, done: bool) -> PlanStep {
    PlanStep {
        id: 0,
        text: text.into(),
        depth,
        done,
    }
}

fn preference(id: i64, title: &str, locked: bool) -> Preference {
    Preference {
        id,
        title: title.into(),
        subtitle: None,
        kind: PreferenceKind::Hard,
        locked,
    }
}

fn workspace() -> Workspace {
    Workspace {
        objective: None,
        document: None,
        plan: Vec::new(),
        preferences: Vec::new(),
        artifacts: Vec::new(),
    }
}

fn call(index: i64, tool: &str, arguments: Value, result: Value) -> StoredToolCall {
    StoredToolCall {
        call_index: index,
        tool: tool.into(),
        success: result["success"] == json!(true),
        arguments,
        action_and_reasoning: Some("why".into()),
        result,
        duration_ms: 1.0,
        created_at: Utc::now(),
    }
}

fn turn(index: i64, status: &str, calls: Vec<StoredToolCall>) -> StoredTurn {
    StoredTurn {
        turn_index: index,
        status: status.into(),
        error: (status == "failed").then(|| "the model went away".to_string()),
        started_at: Utc::now(),
        finished_at: Some(Utc::now()),
        messages: Vec::new(),
        tool_calls: calls,
        usage: None,
    }
}

/// Judges `check` (as written in a scenario file) and returns its outcome; the check must be
/// valid.
fn outcome_of(
    check: &str,
    start: &Workspace,
    end: &Workspace,
    artifacts: &[Artifact],
    turns: &[StoredTurn],
    traces: Option<&[TurnTrace]>,
) -> CheckOutcome {
    let check: Check = serde_json::from_str(check).unwrap();
    check.validate().unwrap();
    let outcome = check.evaluate(&Observed {
        start,
        end,
        artifacts,
        turns,
        traces,
        max_steps: 3,
        offered_tools: &["set_objective"],
    });
    assert!(!outcome.detail.is_empty());
    assert_eq!(outcome.kind, check.kind());
    outcome
}

fn judge(check: &str, start: &Workspace, end: &Workspace, turns: &[StoredTurn]) -> bool {
    outcome_of(check, start, end, &[], turns, None).passed
}

/// The outcome of `check` on `end` (the start empty, no turns).
fn detail_on_end(check: &str, end: &Workspace) -> CheckOutcome {
    outcome_of(check, &workspace(), end, &[], &[], None)
}

/// A turn's answer, as the agent records it.
fn answered(mut turn: StoredTurn, answer: &str) -> StoredTurn {
    turn.messages.push(MessageRecord {
        id: 1,
        role: "assistant".into(),
        content: answer.into(),
        created_at: Utc::now(),
        by: None,
    });
    turn
}

/// A model call of a trace that asked for `tools` (none: a text answer).
fn model_call(call: usize, tools: &[&str]) -> ModelCallTrace {
    ModelCallTrace {
        call,
        seconds: Some(0.1),
        first_token_seconds: Some(0.05),
        prompt_tokens: None,
        cached_tokens: None,
        completion_tokens: None,
        text: String::new(),
        text_chars: 0,
        written_as_text: false,
        tool_calls: tools
            .iter()
            .map(|name| ToolCallTrace {
                name: (*name).into(),
                arguments: "{}".into(),
                step: None,
                outcome: crate::eval::trace::StepOutcome::NotRun,
                envelope: None,
            })
            .collect(),
        stop_reason: None,
        error: None,
    }
}

/// A turn's trace made of `calls`.
fn turn_trace(turn: usize, calls: Vec<ModelCallTrace>) -> TurnTrace {
    TurnTrace {
        turn,
        message: "m".into(),
        status: "completed".into(),
        error: None,
        seconds: None,
        model_calls: calls,
        unmatched_steps: Vec::new(),
        answer: None,
    }
}

fn on_end(check: &str, end: &Workspace) -> bool {
    judge(check, &workspace(), end, &[])
}

fn on_turns(check: &str, turns: &[StoredTurn]) -> bool {
    judge(check, &workspace(), &workspace(), turns)
}

#[test]
fn objective_checks() {
    let mut end = workspace();
    assert!(!on_end(r#""objective_set""#, &end));
    assert!(!on_end(r#"{"objective_mentions": ["lisbon"]}"#, &end));
    end.objective = Some("Plan a relaxed week in Lisbon".into());
    assert!(on_end(r#""objective_set""#, &end));
    assert!(on_end(
        r#"{"objective_mentions": ["LISBON", ["trip", "week"]]}"#,
        &end
    ));
    assert!(!on_end(
        r#"{"objective_mentions": ["lisbon", "budget"]}"#,
        &end
    ));
}

#[test]
fn plan_checks() {
    let mut end = workspace();
    end.plan = vec![
        step("Porto", 0, true),
        step("Book tickets", 1, false),
        step("Lisbon", 0, true),
        step("Book  tickets", 1, false),
    ];
    assert!(on_end(r#"{"plan_min_steps": 4}"#, &end));
    assert!(!on_end(r#"{"plan_min_steps": 5}"#, &end));
    assert!(on_end(r#""plan_no_duplicates""#, &end));
    assert!(on_end(r#"{"plan_min_done": 2}"#, &end));
    assert!(!on_end(r#"{"plan_min_done": 3}"#, &end));
    end.plan.push(step("lisbon", 0, false));
    assert!(!on_end(r#""plan_no_duplicates""#, &end));
}

#[test]
fn document_checks() {
    let mut end = workspace();
    assert!(!on_end(r#"{"document_contains": ["x"]}"#, &end));
    let nothing = detail_on_end(r#"{"document_excludes": ["x"]}"#, &end);
    assert!(!nothing.passed);
    assert!(nothing.detail.contains("no document"), "{}", nothing.detail);
    end.document = Some(Document {
        title: "Notes".into(),
        content: "Meeting on 14 March\nwith   John".into(),
        version: 1,
    });
    assert!(on_end(
        r#"{"document_contains": ["14 march", ["Jon ", "with john"]]}"#,
        &end
    ));
    assert!(!on_end(r#"{"document_contains": ["12 March"]}"#, &end));
    assert!(on_end(r#"{"document_excludes": ["12 March"]}"#, &end));
    assert!(!on_end(r#"{"document_excludes": ["14 MARCH"]}"#, &end));
}

#[test]
fn locked_preferences_must_stay_as_they_were() {
    let mut start = workspace();
    start.preferences = vec![preference(1, "Budget", true), preference(2, "Sea", false)];
    let mut end = start.clone();
    end.preferences.remove(1);
    assert!(judge(
        r#""locked_preferences_untouched""#,
        &start,
        &end,
        &[]
    ));
    let mut changed = start.clone();
    changed.preferences[0].title = "Bigger budget".into();
    assert!(!judge(
        r#""locked_preferences_untouched""#,
        &start,
        &changed,
        &[]
    ));
    let mut unlocked = start.clone();
    unlocked.preferences[0].locked = false;
    assert!(!judge(
        r#""locked_preferences_untouched""#,
        &start,
        &unlocked,
        &[]
    ));
    let mut removed = start.clone();
    removed.preferences.remove(0);
    assert!(!judge(
        r#""locked_preferences_untouched""#,
        &start,
        &removed,
        &[]
    ));
}

#[test]
fn counts_of_preferences_and_artifacts() {
    let mut end = workspace();
    end.preferences = vec![preference(1, "a", false), preference(2, "b", true)];
    assert!(on_end(r#"{"preferences_min": 2}"#, &end));
    assert!(!on_end(r#"{"preferences_min": 3}"#, &end));
    end.artifacts = vec![ArtifactSummary {
        id: 1,
        artifact_type: "bar_chart".into(),
        title: None,
        turn_index: 1,
        created_at: Utc::now(),
    }];
    assert!(on_end(r#"{"artifacts_min": 1}"#, &end));
    assert!(!on_end(r#"{"artifacts_min": 2}"#, &end));
    assert!(on_end(
        r#"{"artifacts_min": {"count": 1, "artifact_type": "bar_chart"}}"#,
        &end
    ));
    assert!(!on_end(
        r#"{"artifacts_min": {"count": 1, "artifact_type": "pie_chart"}}"#,
        &end
    ));
}

#[test]
fn call_checks() {
    let ok = json!({"success": true, "summary": "done"});
    let failed = json!({"success": false, "error": "bad"});
    let locked = json!({"success": true,
            "summary": "no matching preferences found; skipped #1 \"Budget\": locked by the user"});
    let turns = vec![turn(
        1,
        "completed",
        vec![
            call(1, "set_objective", json!({"objective": "a"}), ok.clone()),
            call(2, "add_todos", json!({"steps": []}), failed),
        ],
    )];
    assert!(!on_turns(r#"{"max_failed_calls": 0}"#, &turns));
    assert!(on_turns(r#"{"max_failed_calls": 1}"#, &turns));
    assert!(on_turns(r#""no_repeated_calls""#, &turns));
    assert!(on_turns(r#"{"tools_used": ["set_objective"]}"#, &turns));
    assert!(!on_turns(r#"{"tools_used": ["add_todos"]}"#, &turns));
    assert!(on_turns(r#""no_locked_attempts""#, &turns));
    let repeated = vec![turn(
        1,
        "completed",
        vec![
            call(1, "set_objective", json!({"objective": "a"}), ok.clone()),
            call(2, "set_objective", json!({"objective": "a"}), ok.clone()),
        ],
    )];
    assert!(!on_turns(r#""no_repeated_calls""#, &repeated));
    let across_turns = vec![
        turn(
            1,
            "completed",
            vec![call(1, "list_todos", json!({}), ok.clone())],
        ),
        turn(
            2,
            "completed",
            vec![call(1, "list_todos", json!({}), ok.clone())],
        ),
    ];
    assert!(on_turns(r#""no_repeated_calls""#, &across_turns));
    let touched = vec![turn(
        1,
        "completed",
        vec![call(
            1,
            "remove_preferences",
            json!({"indices": [1]}),
            locked,
        )],
    )];
    assert!(!on_turns(r#""no_locked_attempts""#, &touched));
}

#[test]
fn turns_must_end_with_the_models_answer() {
    let ok = json!({"success": true, "summary": "done"});
    let two = vec![
        call(1, "list_todos", json!({}), ok.clone()),
        call(2, "list_preferences", json!({}), ok.clone()),
    ];
    assert!(on_turns(
        r#""ended_by_model""#,
        &[turn(1, "completed", two.clone())]
    ));
    let mut three = two.clone();
    three.push(call(3, "list_artifacts", json!({}), ok));
    assert!(!on_turns(
        r#""ended_by_model""#,
        &[turn(1, "completed", three)]
    ));
    assert!(!on_turns(
        r#""ended_by_model""#,
        &[turn(1, "failed", two.clone())]
    ));
    assert!(!on_turns(
        r#""ended_by_model""#,
        &[turn(1, "cancelled", two)]
    ));
}

#[test]
fn meaningless_parameters_are_refused() {
    for bad in [
        r#"{"objective_mentions": []}"#,
        r#"{"document_contains": [[]]}"#,
        r#"{"document_contains": {"section": [], "terms": ["x"]}}"#,
        r#"{"document_excludes": [" "]}"#,
        r#"{"document_keeps": []}"#,
        r#"{"document_words": {}}"#,
        r#"{"document_words": {"min": 10, "max": 5}}"#,
        r#"{"tools_used": []}"#,
        r#"{"plan_step": {"text": []}}"#,
        r#"{"plan_step": {"text": ["a"], "parent": [" "]}}"#,
        r#"{"plan_step": {"text": ["a"], "path": []}}"#,
        r#"{"plan_lacks": [""]}"#,
        r#"{"preference": {"title": []}}"#,
        r#"{"preference_lacks": [[]]}"#,
        r#"{"chart": {}}"#,
        r#"{"chart": {"type": "radar_chart"}}"#,
        r#"{"chart": {"labels": []}}"#,
        r#"{"chart": {"values": []}}"#,
        r#"{"chart": {"series_min": 0}}"#,
        r#"{"artifacts_min": {"count": 1, "artifact_type": "bar"}}"#,
        r#"{"answer_mentions": []}"#,
    ] {
        let check: Check = serde_json::from_str(bad).unwrap();
        assert!(check.validate().is_err(), "{bad}");
    }
}
