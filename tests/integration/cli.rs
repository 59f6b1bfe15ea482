//! The `haico` binary: the tool list, bad flags, a clean shutdown on SIGTERM, and the
//! cross-site and rate-limit settings reaching the server.

use std::{
    io::{BufRead, BufReader},
    net::TcpListener,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

fn haico() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_haico"));
    cmd.env_remove("HAICO_DATABASE_URL")
        .env_remove("HAICO_BIND")
        .env_remove("HAICO_LLM_PROVIDER")
        .env_remove("HAICO_LLM_BASE_URL")
        .env_remove("HAICO_LLM_REPLAY_FILE")
        .env_remove("HAICO_LLM_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("RUST_LOG", "info");
    cmd
}

#[test]
fn tools_prints_the_sixteen_tool_specs_as_json() {
    let out = haico().arg("tools").output().unwrap();
    assert!(out.status.success());
    let specs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let specs = specs.as_array().unwrap();
    assert_eq!(specs.len(), 16);
    let expected = serde_json::to_value(haico::tools::tool_specs()).unwrap();
    assert_eq!(serde_json::Value::Array(specs.clone()), expected);
}

#[test]
fn bad_flags_are_reported_without_starting() {
    let out = haico()
        .args(["serve", "--bind", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--bind"), "{err}");

    let out = haico().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unsupported_database_url_is_a_clear_error() {
    let out = haico()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            "mysql://x@y/z",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unsupported database URL"), "{err}");
}

#[test]
fn serve_answers_and_shuts_down_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = dir.path().join("cli.db");
    let mut child = haico()
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env("HAICO_DATABASE_URL", format!("sqlite:{}", db.display()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut listening = false;
    while Instant::now() < deadline {
        match lines.next() {
            Some(Ok(line)) if line.contains("listening") => {
                listening = true;
                break;
            }
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    assert!(listening, "server did not report listening");

    let body = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            reqwest::get(format!("http://127.0.0.1:{port}/healthz"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        })
    })
    .join()
    .unwrap();
    assert!(body.contains("ok"), "{body}");
    assert!(db.exists(), "the SQLite file was created");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status after SIGTERM: {status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "server did not stop after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
}

#[test]
fn chat_runs_one_turn_in_the_terminal_with_the_replay_provider() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        serde_json::json!({"responses": [
            {"text": "On it.", "tool_calls": [
                {"name": "set_objective", "arguments": {"objective": "Plan a trip", "action_and_reasoning": "Noting the goal."}},
                {"name": "add_todos", "arguments": "{broken"}
            ]},
            {"text": "All set."}
        ]})
        .to_string(),
    )
    .unwrap();
    let db = dir.path().join("chat.db");
    let out = haico()
        .args(["chat", "--thread", "term-1", "Help me plan"])
        .env("HAICO_DATABASE_URL", format!("sqlite:{}", db.display()))
        .env("HAICO_LLM_REPLAY_FILE", &script)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("On it."), "{stdout}");
    assert!(
        stdout.contains("· set_objective: Noting the goal."),
        "{stdout}"
    );
    assert!(
        stdout.contains("✗ add_todos — the arguments are not valid JSON"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("All set."), "{stdout}");

    // Without a model the turn fails, says how to configure one, and exits non-zero.
    let out = haico()
        .args(["chat", "--thread", "term-1", "Again"])
        .env("HAICO_DATABASE_URL", format!("sqlite:{}", db.display()))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("error: no language model is configured")
            && stdout.contains("HAICO_LLM_PROVIDER"),
        "{stdout}"
    );

    // A bad thread id is refused before anything runs.
    let out = haico()
        .args(["chat", "--thread", "bad id", "Hi"])
        .env("HAICO_DATABASE_URL", format!("sqlite:{}", db.display()))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid thread id"));
}

/// `haico user add|list|reset-token|remove` on a fresh database: tokens printed once, the
/// password read from standard input and stored so that it signs in, bad input refused with a
/// clear message and a failing exit code.
#[test]
fn accounts_are_managed_from_the_command_line() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("people.db").display());
    let user = |args: &[&str], stdin: Option<&str>| {
        let mut child = haico()
            .arg("user")
            .args(args)
            .args(["--database-url", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        drop(input);
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };

    let (ok, token, err) = user(
        &["add", "ada", "--admin", "--password-stdin"],
        Some("a long passphrase\n"),
    );
    assert!(ok, "{err}");
    assert!(
        token.starts_with("haico_") && !token.contains(' '),
        "{token}"
    );
    let (ok, bob_token, err) = user(&["add", "bob"], None);
    assert!(ok, "{err}");
    let (ok, _, err) = user(&["add", "bob"], None);
    assert!(!ok && err.contains("exists"), "{err}");
    let (ok, _, err) = user(&["add", "bad name"], None);
    assert!(!ok && err.contains("valid account name"), "{err}");
    let (ok, _, err) = user(&["add", "carl", "--password-stdin"], Some("short\n"));
    assert!(!ok && err.contains("at least 8"), "{err}");

    let (ok, list, _) = user(&["list"], None);
    assert!(ok);
    let rows: Vec<Vec<&str>> = list.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert_eq!((rows[0][0], rows[0][1]), ("ada", "admin"));
    assert_eq!((rows[1][0], rows[1][1]), ("bob", "member"));

    let (ok, new_token, err) = user(&["reset-token", "bob"], None);
    assert!(ok, "{err}");
    assert!(new_token.starts_with("haico_") && new_token != bob_token);
    let (ok, _, err) = user(&["reset-token", "nobody"], None);
    assert!(!ok && err.contains("no account named"), "{err}");

    // What the command stored works: ada signs in with her password, bob's new token is his.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let db = haico::store::Database::connect(&url, &Default::default())
            .await
            .unwrap();
        let people = haico::people::People::new(db.clone());
        let (signed_in, _, _) = people
            .sign_in("ada", "a long passphrase", "127.0.0.1")
            .await
            .unwrap();
        assert_eq!(signed_in.name, "ada");
        assert!(
            people
                .sign_in("ada", "wrong passphrase", "127.0.0.1")
                .await
                .is_err()
        );
        let bob = people.user_by_token(&new_token).await.unwrap().unwrap();
        assert_eq!(bob.name, "bob");
        assert!(people.user_by_token(&bob_token).await.unwrap().is_none());
        db.close().await;
    });

    let (ok, _, err) = user(&["remove", "bob"], None);
    assert!(ok, "{err}");
    let (ok, list, _) = user(&["list"], None);
    assert!(ok && !list.contains("bob"), "{list}");
}

/// `haico export` and `haico import` on a SQLite file: a thread made by a terminal turn is
/// written out, loaded back under a new id and written out again with the same lines but the
/// thread line; `--all --out DIR` writes one file per thread; a broken recording is refused
/// with its line number and writes nothing.
#[test]
fn recordings_are_exported_and_imported_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        serde_json::json!({"responses": [
            {"text": "", "tool_calls": [
                {"name": "set_objective", "arguments": {"objective": "Plan a trip", "action_and_reasoning": "Noting the goal."}},
                {"name": "add_todos", "arguments": {"steps": [{"text": "Pick dates"}, {"text": "Book"}], "action_and_reasoning": "A first outline."}}
            ]},
            {"text": "All set."}
        ]})
        .to_string(),
    )
    .unwrap();
    let url = format!("sqlite:{}", dir.path().join("rec.db").display());
    let run = |args: &[&str]| {
        let out = haico()
            .args(args)
            .env("HAICO_DATABASE_URL", &url)
            .env("HAICO_LLM_REPLAY_FILE", &script)
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, _, err) = run(&["chat", "--thread", "trip", "Help me plan"]);
    assert!(ok, "{err}");

    let (ok, first, err) = run(&["export", "--thread", "trip"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = first.lines().collect();
    assert!(
        lines[0].contains("\"format\":\"haico-recording/1\""),
        "{first}"
    );
    assert!(first.contains("\"type\":\"revision\"") && first.contains("\"type\":\"step\""));
    let file = dir.path().join("trip.jsonl");
    std::fs::write(&file, &first).unwrap();

    let (ok, out, err) = run(&["import", file.to_str().unwrap(), "--id", "trip-copy"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "trip-copy");
    let (ok, again, err) = run(&["export", "--thread", "trip-copy"]);
    assert!(ok, "{err}");
    // The same lines but the thread line and the ids of steps, preferences and artifacts,
    // which the importing database gives anew.
    fn without_ids(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    if (key == "id" && field.is_number()) || key == "ids" {
                        *field = serde_json::Value::Null;
                    } else {
                        without_ids(field);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(without_ids),
            _ => {}
        }
    }
    let body = |text: &str| {
        text.lines()
            .skip(1)
            .map(|line| {
                let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
                without_ids(&mut value);
                value
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        body(&again),
        body(&first),
        "the same lines but the thread line and ids"
    );
    assert!(
        again
            .lines()
            .next()
            .unwrap()
            .contains("\"id\":\"trip-copy\"")
    );

    // A taken id is refused.
    let (ok, _, err) = run(&["import", file.to_str().unwrap(), "--id", "trip-copy"]);
    assert!(!ok);
    assert!(err.contains("trip-copy"), "{err}");

    let out_dir = dir.path().join("all");
    let (ok, _, err) = run(&["export", "--all", "--out", out_dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["trip-copy.haico.jsonl", "trip.haico.jsonl"]);

    // A recording broken on its third line: refused whole, naming the line; no thread made.
    let mut broken: Vec<String> = first.lines().map(str::to_string).collect();
    broken[2] = "{not json".to_string();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, broken.join("\n")).unwrap();
    let (ok, _, err) = run(&["import", bad.to_str().unwrap(), "--id", "broken"]);
    assert!(!ok);
    assert!(err.contains("line 3"), "{err}");
    let (ok, _, _) = run(&["export", "--thread", "broken"]);
    assert!(!ok, "nothing was written for the broken recording");
}

/// Starts `haico serve` on a free port over a fresh SQLite file with `envs`; the child and
/// its port, once it says it is listening.
fn serve_with(dir: &std::path::Path, envs: &[(&str, &str)]) -> (std::process::Child, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = haico()
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env(
            "HAICO_DATABASE_URL",
            format!("sqlite:{}", dir.join("serve.db").display()),
        )
        .envs(envs.iter().copied())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let listening = lines
        .by_ref()
        .take(200)
        .map_while(Result::ok)
        .any(|line| line.contains("listening"));
    assert!(listening, "server did not report listening");
    // Keep reading the log, so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    (child, port)
}

#[test]
fn the_cross_site_settings_and_limits_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, port) = serve_with(
        dir.path(),
        &[
            ("HAICO_PUBLIC_HOSTS", "haico.test"),
            ("HAICO_ALLOWED_ORIGINS", "https://app.test"),
            ("HAICO_SIGN_INS_PER_MINUTE", "1"),
        ],
    );
    let statuses = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let client = reqwest::Client::new();
            let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
            let status = |request: reqwest::RequestBuilder| async move {
                request.send().await.unwrap().status().as_u16()
            };
            let sign_in = serde_json::json!({"name": "nobody", "password": "wrong"});
            vec![
                status(client.get(url("/api/threads")).header("host", "haico.test")).await,
                status(client.get(url("/api/threads")).header("host", "evil.test")).await,
                status(
                    client
                        .post(url("/api/threads"))
                        .header("origin", "https://app.test"),
                )
                .await,
                status(
                    client
                        .post(url("/api/threads"))
                        .header("origin", "https://evil.test"),
                )
                .await,
                status(client.post(url("/api/session")).json(&sign_in)).await,
                status(client.post(url("/api/session")).json(&sign_in)).await,
            ]
        })
    })
    .join()
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(statuses[..4], [200, 403, 201, 403]);
    assert_ne!(statuses[4], 429, "the first sign-in is let in");
    assert_eq!(statuses[5], 429, "the second within the minute waits");
}

#[test]
fn a_mistyped_host_or_origin_stops_the_server_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in [
        ("HAICO_PUBLIC_HOSTS", "https://haico.test/"),
        ("HAICO_ALLOWED_ORIGINS", "app.test"),
    ] {
        let out = haico()
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env(
                "HAICO_DATABASE_URL",
                format!("sqlite:{}", dir.path().join("never.db").display()),
            )
            .env(name, value)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && err.contains(value), "{name}: {err}");
        assert!(
            !dir.path().join("never.db").exists(),
            "{name}: nothing was opened"
        );
    }
}
