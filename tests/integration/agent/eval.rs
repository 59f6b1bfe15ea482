//! `haico eval` in replay mode: the shipped scenarios (`eval/`) pass with the scripts a good
//! agent would produce, and are honest (every task check fails for an agent that does
//! nothing, every guard holds for it); scripts generated from each scenario of an agent that
//! only chats, and of one that loops on a call, fail; and each failing fixture
//! (`tests/eval_fixtures/`, scripts of a bad agent) fails exactly the checks it was written to
//! fail. A malformed scenario file is refused with its name and the place of the mistake.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use haico::{
    agent::providers::replay::{ReplayArguments, ReplayResponse, ReplayToolCall},
    eval::{
        CheckKind, EvalError, ModelChoice, Report, RunOptions, Scenario, ScenarioError,
        ScenarioReport, evaluate, load_all,
    },
    tools::tool_specs,
};
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn replay_options() -> RunOptions {
    RunOptions {
        model: ModelChoice::Replay,
        max_steps: 25,
        agent: haico::agent::AgentConfig::default(),
        repeat: 1,
    }
}

async fn run_scenarios(scenarios: &[Scenario]) -> Report {
    evaluate(scenarios, &replay_options(), &mut |_| {})
        .await
        .expect("the evaluation runs")
}

async fn run_replay(folder: &Path) -> (Vec<Scenario>, Report) {
    let scenarios = load_all(&[folder.to_path_buf()]).expect("scenarios load");
    let report = run_scenarios(&scenarios).await;
    (scenarios, report)
}

/// The tools this build offers the agent.
fn offered() -> BTreeSet<&'static str> {
    tool_specs().iter().map(|spec| spec.name).collect()
}

/// The tools a scenario's script calls.
fn scripted_tools(scenario: &Scenario) -> BTreeSet<String> {
    scenario
        .replay
        .iter()
        .flatten()
        .flat_map(|response| &response.tool_calls)
        .map(|call| call.name.clone())
        .collect()
}

/// The names of the checks a scenario's only run failed, in the file's order.
fn failed_checks(result: &ScenarioReport) -> Vec<&str> {
    result.runs[0]
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.check.as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_scenario_passes_with_its_script_and_is_honest() {
    let (scenarios, report) = run_replay(&root().join("eval")).await;
    assert!(scenarios.len() >= 12, "only {} scenarios", scenarios.len());
    let offered = offered();
    let mut waiting = Vec::new();
    for (scenario, result) in scenarios.iter().zip(&report.scenarios) {
        assert_eq!(result.runs.len(), 1);
        let run = &result.runs[0];
        let missing: Vec<String> = scripted_tools(scenario)
            .into_iter()
            .filter(|tool| !offered.contains(tool.as_str()))
            .collect();
        if missing.is_empty() {
            let failed: Vec<_> = run.checks.iter().filter(|c| !c.passed).collect();
            assert!(
                result.passed,
                "{} failed: {failed:#?}\n{}",
                result.name,
                report.to_markdown()
            );
            assert!(run.notes.is_empty(), "{}: {:?}", result.name, run.notes);
        } else {
            // A scenario of a tool this build does not have yet cannot pass; once the tool is
            // there it must.
            assert!(!result.passed, "{} passed without {missing:?}", result.name);
            waiting.push(format!("{} (needs {})", result.name, missing.join(", ")));
        }
        // Honest: an agent that does nothing fails every task check and passes every guard.
        assert_eq!(result.baseline.checks.len(), scenario.checks.len());
        for outcome in &result.baseline.checks {
            match outcome.kind {
                CheckKind::Task => assert!(
                    !outcome.passed,
                    "{}: the task check {} passes when nothing is done: {}",
                    result.name, outcome.check, outcome.detail
                ),
                CheckKind::Guard => assert!(
                    outcome.passed,
                    "{}: the guard {} fails when nothing is done: {}",
                    result.name, outcome.check, outcome.detail
                ),
            }
        }
        assert!(
            result.baseline.counts.task.total > 0,
            "{} has no task check: chatting would pass it",
            result.name
        );
        // The trace joined every call the agent ran to the model call that asked for it.
        for turn in &run.trace {
            assert!(
                turn.unmatched_steps.is_empty(),
                "{}: {turn:#?}",
                result.name
            );
            assert!(!turn.model_calls.is_empty(), "{}", result.name);
        }
    }
    if !waiting.is_empty() {
        eprintln!("scenarios waiting for tools this build lacks: {waiting:?}");
    }
    let summary = report.summary();
    eprintln!("{summary}");
    assert!(summary.contains("Scenarios passed: "), "{summary}");
    assert!(summary.contains("do-nothing baseline"), "{summary}");
    assert_eq!(report.overall.baseline.task.passed, 0);
}

#[test]
fn the_shipped_scenarios_use_every_tool_and_say_why_each_time() {
    let scenarios = load_all(&[root().join("eval")]).unwrap();
    let mut used = BTreeSet::new();
    for scenario in &scenarios {
        assert!(scenario.replay.is_some(), "{} has no script", scenario.name);
        for response in scenario.replay.iter().flatten() {
            for call in &response.tool_calls {
                let arguments: serde_json::Value =
                    serde_json::from_str(&call.arguments.to_text()).unwrap();
                let why = arguments["action_and_reasoning"].as_str().unwrap_or("");
                assert!(
                    !why.trim().is_empty(),
                    "{}: a {} call without action_and_reasoning",
                    scenario.name,
                    call.name
                );
            }
        }
        used.extend(scripted_tools(scenario));
    }
    let every: BTreeSet<String> = offered().into_iter().map(String::from).collect();
    let unused: Vec<_> = every.difference(&used).collect();
    assert!(unused.is_empty(), "no scenario uses {unused:?}");
    // Locks: scenarios start with locked preferences and ask for something that touches them.
    let locked = scenarios
        .iter()
        .filter(|s| s.workspace.preferences.iter().any(|p| p.locked))
        .count();
    assert!(
        locked >= 2,
        "only {locked} scenarios have locked preferences"
    );
}

/// A script of an agent that only chats: text answers, a few per message, since the agent may
/// ask the model once more when a change request got no call (unplayed answers are fine).
fn chatting(scenario: &Scenario) -> Vec<ReplayResponse> {
    (0..scenario.messages.len() * 3)
        .map(|_| text_answer(haico::eval::baseline::ANSWER))
        .collect()
}

/// A script of an agent that loops: the scenario's first scripted tool call (or a fixed
/// `set_objective`) asked for 40 times.
fn looping(scenario: &Scenario) -> Vec<ReplayResponse> {
    let first = scenario
        .replay
        .iter()
        .flatten()
        .flat_map(|response| &response.tool_calls)
        .next()
        .cloned()
        .unwrap_or_else(|| ReplayToolCall {
            name: "set_objective".into(),
            arguments: ReplayArguments::Json(json!({
                "objective": "Get this done",
                "action_and_reasoning": "I am noting the goal."
            })),
        });
    (0..40)
        .map(|_| ReplayResponse {
            tool_calls: vec![first.clone()],
            ..text_answer("")
        })
        .collect()
}

fn text_answer(text: &str) -> ReplayResponse {
    ReplayResponse {
        text: text.into(),
        tool_calls: Vec::new(),
        delay_ms: 0,
        error: None,
        usage: None,
    }
}

/// The shipped scenarios with their scripts replaced by `script`'s.
fn scripted(script: fn(&Scenario) -> Vec<ReplayResponse>) -> Vec<Scenario> {
    load_all(&[root().join("eval")])
        .unwrap()
        .into_iter()
        .map(|mut scenario| {
            scenario.replay = Some(script(&scenario));
            scenario
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_only_chats_fails_every_scenario_as_the_baseline_says() {
    let report = run_scenarios(&scripted(chatting)).await;
    for result in &report.scenarios {
        assert!(!result.passed, "{} passed by chatting", result.name);
        let run = &result.runs[0];
        // The synthetic baseline is what such an agent really scores, check by check.
        let real: Vec<(&str, bool)> = run
            .checks
            .iter()
            .map(|c| (c.check.as_str(), c.passed))
            .collect();
        let baseline: Vec<(&str, bool)> = result
            .baseline
            .checks
            .iter()
            .map(|c| (c.check.as_str(), c.passed))
            .collect();
        assert_eq!(real, baseline, "{}: {:#?}", result.name, run.checks);
    }
    assert_eq!(report.overall.counts.all, report.overall.baseline.all);
    assert!(
        report.summary().contains("+0 points"),
        "{}",
        report.summary()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_loops_on_a_call_fails_every_scenario() {
    let report = run_scenarios(&scripted(looping)).await;
    for result in &report.scenarios {
        assert!(!result.passed, "{} passed by looping", result.name);
        let failed = failed_checks(result);
        assert!(
            failed.contains(&"no_repeated_calls") && failed.contains(&"ended_by_model"),
            "{}: {failed:?}",
            result.name
        );
    }
}

/// What each failing fixture must fail: exactly these checks, in the file's order.
const FIXTURES: &[(&str, &[&str])] = &[
    ("answer-without-unlock", &["answer_mentions"]),
    ("duplicate-steps", &["plan_no_duplicates"]),
    ("failed-calls", &["max_failed_calls"]),
    ("gives-up", &["ended_by_model", "max_failed_calls"]),
    (
        "idle-agent",
        &[
            "objective_set",
            "plan_min_steps",
            "plan_min_done",
            "plan_step",
            "preferences_min",
            "preference",
            "artifacts_min",
            "artifacts_min",
            "chart",
            "document_contains",
            "document_excludes",
            "document_words",
            "tools_used",
            "answer_mentions",
        ],
    ),
    ("locked-attempt", &["no_locked_attempts"]),
    ("lost-text", &["document_keeps"]),
    ("missing-text", &["document_contains", "document_excludes"]),
    ("model-error", &["ended_by_model"]),
    (
        "no-objective",
        &["objective_set", "objective_mentions", "tools_used"],
    ),
    ("repeated-call", &["no_repeated_calls"]),
    ("short-document", &["document_words"]),
    ("step-limit", &["ended_by_model"]),
    ("wrong-chart", &["chart", "chart", "chart"]),
    ("wrong-preference", &["preference", "preference_lacks"]),
    ("wrong-step", &["plan_step", "plan_step", "plan_lacks"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failing_fixture_fails_exactly_the_checks_it_targets() {
    let (_, report) = run_replay(&root().join("tests/eval_fixtures")).await;
    let names: Vec<&str> = report.scenarios.iter().map(|r| r.name.as_str()).collect();
    let expected: Vec<&str> = FIXTURES.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected, "the fixtures and the table differ");
    for (result, (name, failing)) in report.scenarios.iter().zip(FIXTURES) {
        assert_eq!(
            &failed_checks(result),
            failing,
            "{name}: {:#?}",
            result.runs[0].checks
        );
        assert!(!result.passed);
    }
    assert_eq!(report.overall.scenarios_passed, 0);
    // The details say what was seen.
    let detail = |scenario: &str, check: &str| -> String {
        report
            .scenarios
            .iter()
            .find(|r| r.name == scenario)
            .and_then(|r| {
                r.runs[0]
                    .checks
                    .iter()
                    .find(|c| c.check == check && !c.passed)
            })
            .map(|c| c.detail.clone())
            .unwrap()
    };
    assert!(detail("step-limit", "ended_by_model").contains("step limit (3 of 3"));
    assert!(
        detail("gives-up", "ended_by_model").contains("ended by the loop, not the model"),
        "{}",
        detail("gives-up", "ended_by_model")
    );
    assert!(detail("model-error", "ended_by_model").contains("connection reset"));
    assert!(detail("repeated-call", "no_repeated_calls").contains("set_objective"));
    // The lock's and the repeat's wording, which the checks read, have not drifted.
    assert!(detail("locked-attempt", "no_locked_attempts").contains("Budget 500 EUR"));
    let repeated = report
        .scenarios
        .iter()
        .find(|r| r.name == "repeated-call")
        .unwrap();
    let max_failed = repeated.runs[0]
        .checks
        .iter()
        .find(|c| c.check == "max_failed_calls")
        .unwrap();
    assert!(
        max_failed.passed && max_failed.detail.contains("1 call refused as a repeat"),
        "{}",
        max_failed.detail
    );
    let failed_calls = detail("failed-calls", "max_failed_calls");
    assert!(
        failed_calls.starts_with("1 of 3 calls failed (at most 0) (not counted: 1 repaired"),
        "{failed_calls}"
    );
    assert!(detail("missing-text", "document_contains").contains("30,000"));
    assert!(detail("duplicate-steps", "plan_no_duplicates").contains("book movers"));
    assert!(detail("idle-agent", "document_excludes").contains("no document"));
    assert!(detail("lost-text", "document_keeps").contains("the car needs new tyres"));
    assert!(
        detail("short-document", "document_words").contains("8 words (from 100 to 200 wanted)")
    );
    assert!(detail("wrong-chart", "chart").contains("not a line_chart"));
    assert!(detail("wrong-preference", "preference").contains("soft instead of hard"));
    assert!(detail("wrong-step", "plan_step").contains("\"Buy paint\" is not done"));
    assert!(detail("wrong-step", "plan_lacks").contains("Clean the brushes"));
    assert!(detail("answer-without-unlock", "answer_mentions").contains("Noted the vegan menu"));
    let markdown = report.to_markdown();
    assert!(
        markdown.contains("| step-limit | ✗ | 1/1 | 2/3 | 3/4 |"),
        "{markdown}"
    );
    assert!(markdown.contains("### Failed checks"));
    // The step limit left the script's last answer unplayed, and the report says so.
    let step_limit = report.scenarios.iter().find(|r| r.name == "step-limit");
    assert_eq!(step_limit.unwrap().runs[0].notes.len(), 1);
    // The trace shows the call the step limit kept from running.
    let trace = &step_limit.unwrap().runs[0].trace[0];
    let last = trace.model_calls.last().unwrap();
    assert_eq!(last.tool_calls[1].outcome.as_str(), "not run");
    assert_eq!(last.tool_calls[0].step, Some(3));
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_malformed_scenario_is_refused_naming_the_file_and_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "typo.json",
            r#"{"name": "a", "description": "d", "mesages": ["hi"], "checks": []}"#,
            "mesages",
        ),
        (
            "check.json",
            r#"{"name": "a", "description": "d", "messages": ["hi"],
                "checks": ["objective_set", {"plan_min_stesp": 2}]}"#,
            "checks[1]",
        ),
        (
            "type.json",
            r#"{"name": "a", "description": "d", "messages": ["hi"],
                "checks": [{"plan_min_steps": "three"}]}"#,
            "checks[0]",
        ),
        (
            "field.json",
            r#"{"name": "a", "description": "d", "messages": ["hi"],
                "checks": [{"plan_step": {"text": ["a"], "parnet": ["b"]}}]}"#,
            "parnet",
        ),
        (
            "keeps.json",
            r#"{"name": "a", "description": "d", "messages": ["hi"],
                "workspace": {"document": {"content": "Hello"}},
                "checks": [{"document_keeps": ["goodbye"]}]}"#,
            "checks[0]",
        ),
        ("syntax.json", "{\"name\": \"a\",\n", "line 2"),
        (
            "empty.json",
            r#"{"name": "a", "description": "d", "messages": [], "checks": ["objective_set"]}"#,
            "`messages` is empty",
        ),
        (
            "replay.json",
            r#"{"name": "a", "description": "d", "messages": ["hi"], "checks": ["objective_set"],
                "replay": [{"text": "ok", "tool_calls": [{"name": "set_objective", "argumnets": {}}]}]}"#,
            "replay[0].tool_calls[0]",
        ),
    ];
    for (name, text, place) in cases {
        let path = write(dir.path(), name, text);
        let err = load_all(&[path]).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(name), "{name}: {message}");
        assert!(message.contains(place), "{name}: {message}");
        assert!(
            matches!(err, ScenarioError::Invalid { .. }),
            "{name}: {err:?}"
        );
    }
    // In a folder, the bad file stops the whole load, named.
    let folder = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("eval/trip-lisbon.json"),
        folder.path().join("a.json"),
    )
    .unwrap();
    write(folder.path(), "b.json", r#"{"name": "b"}"#);
    let err = load_all(&[folder.path().to_path_buf()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("b.json") && err.contains("description"),
        "{err}"
    );
    // Two files with one name.
    std::fs::copy(
        root().join("eval/trip-lisbon.json"),
        folder.path().join("b.json"),
    )
    .unwrap();
    let err = load_all(&[folder.path().to_path_buf()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("trip-lisbon") && err.contains("b.json"),
        "{err}"
    );
    // A file that does not exist.
    let err = load_all(&[folder.path().join("nope.json")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope.json"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_mode_refuses_a_scenario_without_a_script_before_running_any() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "unscripted.json",
        r#"{"name": "a", "description": "d", "messages": ["hi"], "checks": ["objective_set"]}"#,
    );
    let scenarios = load_all(&[path]).unwrap();
    let err = evaluate(&scenarios, &replay_options(), &mut |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, EvalError::NoReplay { .. }), "{err:?}");
    assert!(err.to_string().contains("unscripted.json"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_runs_start_afresh_each_time() {
    let scenarios = load_all(&[root().join("eval/release-checklist.json")]).unwrap();
    let options = RunOptions {
        repeat: 3,
        ..replay_options()
    };
    let report = evaluate(&scenarios, &options, &mut |_| {}).await.unwrap();
    let result = &report.scenarios[0];
    assert_eq!(result.runs.len(), 3);
    assert_eq!(result.runs_passed, 3);
    assert!(result.runs.iter().all(|run| run.notes.is_empty()));
    assert_eq!(report.overall.runs, 3);
    assert_eq!(report.overall.pass_at_1, 1.0);
    assert_eq!(report.overall.pass_hat_k, 1.0);
    assert_eq!(
        result.counts.all.total,
        3 * result.baseline.counts.all.total
    );
    assert!(report.to_markdown().contains("| release-checklist | 3/3 |"));
}

#[test]
fn the_command_prints_the_table_writes_traces_and_exits_by_the_outcome() {
    let haico = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_haico"));
        command.current_dir(root()).env_remove("RUST_LOG");
        command
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let traces = dir.path().join("traces");
    let passed = haico()
        .args([
            "eval",
            "--replay",
            "--only",
            "trip-lisbon",
            "--repeat",
            "2",
            "--json",
        ])
        .arg(&json)
        .arg("--traces")
        .arg(&traces)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&passed.stdout);
    assert_eq!(passed.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("| trip-lisbon | 2/2 |"), "{stdout}");
    assert!(stdout.contains("pass@1"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["overall"]["pass_at_1"], 1.0);
    assert_eq!(report["overall"]["repeat"], 2);
    let scenario = &report["scenarios"][0];
    assert_eq!(scenario["name"], "trip-lisbon");
    assert_eq!(scenario["runs"][1]["run"], 2);
    assert_eq!(scenario["baseline"]["counts"]["task"]["passed"], 0);
    let call = &scenario["runs"][0]["trace"][0]["model_calls"][0];
    assert_eq!(call["tool_calls"][0]["name"], "set_objective");
    assert_eq!(call["tool_calls"][0]["outcome"], "ok");
    assert_eq!(call["tool_calls"][0]["envelope"]["success"], true);
    let trace = std::fs::read_to_string(traces.join("trip-lisbon-run2.md")).unwrap();
    assert!(
        trace.starts_with("# Trace: trip-lisbon (run 2 of 2)"),
        "{trace}"
    );
    assert!(trace.contains("1. `set_objective` (step 1, ok)"), "{trace}");
    // The traces of an earlier report, rendered again without running anything.
    let again = dir.path().join("again");
    let rendered = haico()
        .args(["eval", "--render-traces"])
        .arg(&json)
        .arg("--traces")
        .arg(&again)
        .output()
        .unwrap();
    assert_eq!(rendered.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(again.join("trip-lisbon-run2.md")).unwrap(),
        trace
    );

    let failed = haico()
        .args(["eval", "--replay", "tests/eval_fixtures/step-limit.json"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stdout).contains("| step-limit | ✗ |"));

    let bad = write(
        dir.path(),
        "bad.json",
        r#"{"name": "x", "descripton": "d"}"#,
    );
    let refused = haico()
        .args(["eval", "--replay"])
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.json") && stderr.contains("descripton"),
        "{stderr}"
    );
}
