//! `haico eval` in replay mode: the shipped scenarios (`eval/`) pass with the scripts a good
//! agent would produce, and the checks bite: each failing fixture (`tests/eval_fixtures/`,
//! scripts of a bad agent) fails exactly the checks it was written to fail. A malformed
//! scenario file is refused with its name and the place of the mistake.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use haico::{
    eval::{
        EvalError, ModelChoice, Report, RunOptions, Scenario, ScenarioError, evaluate, load_all,
    },
    tools::tool_specs,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn replay_options() -> RunOptions {
    RunOptions {
        model: ModelChoice::Replay,
        max_steps: 25,
        agent: haico::agent::AgentConfig::default(),
    }
}

async fn run_replay(folder: &Path) -> (Vec<Scenario>, Report) {
    let scenarios = load_all(&[folder.to_path_buf()]).expect("scenarios load");
    let report = evaluate(&scenarios, &replay_options(), &mut |_| {})
        .await
        .expect("the evaluation runs");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_scenario_passes_with_its_script() {
    let (scenarios, report) = run_replay(&root().join("eval")).await;
    assert!(scenarios.len() >= 12, "only {} scenarios", scenarios.len());
    let offered = offered();
    let mut waiting = Vec::new();
    for (scenario, result) in scenarios.iter().zip(&report.scenarios) {
        let missing: Vec<String> = scripted_tools(scenario)
            .into_iter()
            .filter(|tool| !offered.contains(tool.as_str()))
            .collect();
        if missing.is_empty() {
            let failed: Vec<_> = result.checks.iter().filter(|c| !c.passed).collect();
            assert!(
                result.passed,
                "{} failed: {failed:#?}\n{}",
                result.name,
                report.to_markdown()
            );
            assert!(
                result.notes.is_empty(),
                "{}: {:?}",
                result.name,
                result.notes
            );
        } else {
            // A scenario of a tool this build does not have yet (edit_document, while it is
            // being added) cannot pass; once the tool is there it must.
            assert!(!result.passed, "{} passed without {missing:?}", result.name);
            waiting.push(format!("{} (needs {})", result.name, missing.join(", ")));
        }
    }
    if !waiting.is_empty() {
        eprintln!("scenarios waiting for tools this build lacks: {waiting:?}");
    }
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
    let mut every: BTreeSet<String> = offered().into_iter().map(String::from).collect();
    every.insert("edit_document".to_string());
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

/// What each failing fixture must fail: exactly these checks, in the file's order.
const FIXTURES: &[(&str, &[&str])] = &[
    ("duplicate-steps", &["plan_no_duplicates"]),
    ("failed-calls", &["max_failed_calls"]),
    (
        "idle-agent",
        &[
            "plan_min_steps",
            "plan_min_done",
            "preferences_min",
            "artifacts_min",
            "artifacts_min",
            "document_contains",
        ],
    ),
    ("locked-attempt", &["no_locked_attempts"]),
    ("missing-text", &["document_contains", "document_excludes"]),
    ("model-error", &["ended_by_model"]),
    (
        "no-objective",
        &["objective_set", "objective_mentions", "tools_used"],
    ),
    ("repeated-call", &["no_repeated_calls"]),
    ("step-limit", &["ended_by_model"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failing_fixture_fails_exactly_the_checks_it_targets() {
    let (_, report) = run_replay(&root().join("tests/eval_fixtures")).await;
    let names: Vec<&str> = report.scenarios.iter().map(|r| r.name.as_str()).collect();
    let expected: Vec<&str> = FIXTURES.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected, "the fixtures and the table differ");
    for (result, (name, failing)) in report.scenarios.iter().zip(FIXTURES) {
        let failed: Vec<&str> = result
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.check)
            .collect();
        assert_eq!(&failed, failing, "{name}: {:#?}", result.checks);
        assert!(!result.passed);
    }
    assert_eq!(report.overall.passed, 0);
    // The details say what was seen.
    let detail = |scenario: &str, check: &str| -> String {
        report
            .scenarios
            .iter()
            .find(|r| r.name == scenario)
            .and_then(|r| r.checks.iter().find(|c| c.check == check && !c.passed))
            .map(|c| c.detail.clone())
            .unwrap()
    };
    assert!(detail("step-limit", "ended_by_model").contains("step limit (3 of 3"));
    assert!(detail("model-error", "ended_by_model").contains("connection reset"));
    assert!(detail("repeated-call", "no_repeated_calls").contains("set_objective"));
    assert!(detail("locked-attempt", "no_locked_attempts").contains("Budget 500 EUR"));
    assert!(detail("failed-calls", "max_failed_calls").starts_with("2 of 3 calls failed"));
    assert!(detail("missing-text", "document_contains").contains("30,000"));
    assert!(detail("duplicate-steps", "plan_no_duplicates").contains("book movers"));
    let markdown = report.to_markdown();
    assert!(markdown.contains("| step-limit | ✗ | 3/4 |"), "{markdown}");
    assert!(markdown.contains("### Failed checks"));
    // The step limit left the script's last answer unplayed, and the report says so.
    let step_limit = report.scenarios.iter().find(|r| r.name == "step-limit");
    assert_eq!(step_limit.unwrap().notes.len(), 1);
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

#[test]
fn the_command_prints_the_table_and_exits_by_the_outcome() {
    let haico = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_haico"));
        command.current_dir(root()).env_remove("RUST_LOG");
        command
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let passed = haico()
        .args(["eval", "--replay", "--only", "trip-lisbon", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&passed.stdout);
    assert_eq!(passed.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("| trip-lisbon | ✓ |"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["overall"]["pass_rate"], 1.0);
    assert_eq!(report["scenarios"][0]["name"], "trip-lisbon");

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
