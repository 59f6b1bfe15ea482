//! A real `haico serve` child process on a port of its own choosing (`--bind 127.0.0.1:0`; the
//! port is read from its "haico is listening" log line), for tests that must kill, restart or
//! starve the server as an operator's bad day would: `kill -9`, a database outage, start-up
//! against a database that is not there.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// How long a healthy start may take (a debug build on a busy CI machine runs migrations).
const START_WITHIN: Duration = Duration::from_secs(60);

/// A running `haico serve`; killed on drop.
pub struct ChildServer {
    /// `http://127.0.0.1:<port>` of the current run.
    pub base: String,
    pub http: reqwest::Client,
    env: Vec<(String, String)>,
    child: Option<Child>,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// `haico serve` with `env` on top of a clean environment (no `HAICO_*` of the developer's).
fn command(env: &[(String, String)], log: &std::fs::File) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_haico"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().to_string();
        if key.starts_with("HAICO_") || key == "OPENAI_API_KEY" || key == "ANTHROPIC_API_KEY" {
            cmd.env_remove(key);
        }
    }
    cmd.args(["serve", "--bind", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log handle"))
        .stderr(log.try_clone().expect("log handle"));
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd
}

fn owned(env: &[(&str, &str)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl ChildServer {
    /// Starts `haico serve` over `database_url` with `env`; returns once `/healthz` answers.
    pub async fn start(database_url: &str, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut env = owned(env);
        env.push(("HAICO_DATABASE_URL".into(), database_url.into()));
        let mut server = Self {
            base: String::new(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("http client"),
            env,
            child: None,
            log: dir.path().join("server.log"),
            _dir: dir,
        };
        server.spawn_and_wait().await;
        server
    }

    async fn spawn_and_wait(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("server log");
        let already = self.log_text().len();
        let child = command(&self.env, &log).spawn().expect("spawn haico serve");
        self.child = Some(child);
        let deadline = Instant::now() + START_WITHIN;
        let addr = loop {
            if let Some(addr) = listening_addr(&self.log_text()[already..]) {
                break addr;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "haico serve exited ({status}) before listening:\n{}",
                    self.log_tail(40)
                );
            }
            assert!(
                Instant::now() < deadline,
                "haico serve did not start listening within {START_WITHIN:?}:\n{}",
                self.log_tail(40)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        self.base = format!("http://{addr}");
        loop {
            if let Ok(resp) = self
                .http
                .get(self.url("/healthz"))
                .timeout(Duration::from_secs(5))
                .send()
                .await
                && resp.status().is_success()
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "haico serve never became healthy:\n{}",
                self.log_tail(40)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The JSON answer to `GET path`; panics, with the server's log, when there is none.
    pub async fn get_json(&self, path: &str) -> serde_json::Value {
        let response = self.http.get(self.url(path)).send().await;
        let response = response.unwrap_or_else(|err| {
            panic!("GET {path}: {err}\n{}", self.log_tail(30));
        });
        response.json().await.unwrap_or_else(|err| {
            panic!("GET {path}: not JSON: {err}\n{}", self.log_tail(30));
        })
    }

    /// Everything the server logged, all runs.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `lines` lines of the log, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = self.log_text();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// The process id of the current run.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).expect("the server runs")
    }

    /// `kill -9`: the process ends at once, with no chance to flush or shut down.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL the server");
            child.wait().expect("reap the server");
        }
    }

    /// Starts the server again with the same settings (a new port); returns once healthy.
    pub async fn restart(&mut self) {
        self.kill();
        self.spawn_and_wait().await;
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The address in a "haico is listening addr=…" log line.
fn listening_addr(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("haico is listening"))?;
    let start = line.find("addr=")? + "addr=".len();
    let addr: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    (!addr.is_empty()).then_some(addr)
}

/// Runs `haico serve` over `database_url`, which must fail to start; returns how long it took
/// and what it printed. Gives up (failing the test) after `limit` plus a margin.
pub fn start_fails(
    database_url: &str,
    env: &[(&str, &str)],
    limit: Duration,
) -> (Duration, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let mut env = owned(env);
    env.push(("HAICO_DATABASE_URL".into(), database_url.into()));
    let started = Instant::now();
    let mut child = command(&env, &log).spawn().expect("spawn haico serve");
    let give_up = limit + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            break status;
        }
        if started.elapsed() > give_up {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "haico serve over {database_url} was still running after {give_up:?}:\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(
        !status.success(),
        "haico serve over {database_url} should have failed:\n{output}"
    );
    (elapsed, output)
}
