//! `haico serve` configured only by the standard OpenTelemetry variables, as a person sets
//! them, over both transports: spans reach the endpoint named by
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (with `/v1/traces` added for HTTP), carry `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, travel with
//! `OTEL_EXPORTER_OTLP_HEADERS`, and what is queued at SIGTERM is sent before the process
//! ends. A value haico cannot honour stops the start, naming the variable.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use super::receiver::Receiver;

fn haico() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_haico"));
    for name in [
        "HAICO_DATABASE_URL",
        "HAICO_LLM_PROVIDER",
        "HAICO_LLM_BASE_URL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
    ] {
        cmd.env_remove(name);
    }
    cmd.env("RUST_LOG", "info");
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exports_over_http_where_the_standard_variables_say() {
    let receiver = Receiver::start().await;
    let base = receiver.url.trim_end_matches("/v1/traces").to_string();
    serve_exports(&receiver, &base, "http/protobuf").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_exports_over_grpc_where_the_standard_variables_say() {
    let receiver = Receiver::start_grpc().await;
    let url = receiver.url.clone();
    serve_exports(&receiver, &url, "grpc").await;
}

async fn serve_exports(receiver: &Receiver, base: &str, protocol: &str) {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::common::free_port();
    let mut child = haico()
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env(
            "HAICO_DATABASE_URL",
            format!("sqlite:{}", dir.path().join("otel.db").display()),
        )
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", base)
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_SERVICE_NAME", "haico-e2e")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cret%20value")
        // A long delay: only the flush at shutdown can send these spans in time.
        .env("OTEL_BSP_SCHEDULE_DELAY", "60000")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = said.send(line);
        }
    });
    let mut log = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !log.iter().any(|l: &String| l.contains("listening")) {
        assert!(Instant::now() < deadline, "server did not start: {log:?}");
        if let Ok(line) = heard.recv_timeout(Duration::from_millis(200)) {
            log.push(line);
        }
    }
    assert!(
        log.iter().any(
            |l| l.contains(&format!("exporting traces over OTLP ({protocol})"))
                && l.contains(&receiver.url)
        ),
        "{log:?}"
    );

    let client = reqwest::Client::new();
    let created = client
        .post(format!("http://127.0.0.1:{port}/api/threads"))
        .json(&serde_json::json!({"id": "e2e"}))
        .send()
        .await
        .unwrap();
    assert!(created.status().is_success(), "{}", created.status());

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "server did not stop after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let spans = receiver.spans();
    let request = spans
        .iter()
        .find(|s| s.name == "POST /api/threads")
        .unwrap_or_else(|| panic!("no request span: {spans:#?}"));
    assert_eq!(
        request.resource.get("service.name"),
        Some(&serde_json::json!("haico-e2e"))
    );
    assert_eq!(
        request.resource.get("deployment.environment"),
        Some(&serde_json::json!("test"))
    );
    assert!(
        spans
            .iter()
            .any(|s| s.parent == request.id && s.attr_str("haico.db.outcome") == "commit"),
        "the thread's write is under its request: {spans:#?}"
    );
    let headers = receiver.headers();
    assert!(!headers.is_empty());
    assert!(
        headers
            .iter()
            .all(|h| h.iter().any(|l| l == "x-api-key: s3cret value")),
        "{headers:?}"
    );
}

#[test]
fn an_unusable_setting_stops_the_start_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"),
        ("OTEL_TRACES_SAMPLER", "sometimes"),
        (
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            "maybe",
        ),
    ] {
        let started = Instant::now();
        let out = haico()
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env(
                "HAICO_DATABASE_URL",
                format!("sqlite:{}", dir.path().join("never.db").display()),
            )
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
            .env(name, value)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(name) && err.contains(value) && err.contains("expected"),
            "{name}: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: answered at once"
        );
        assert!(
            !dir.path().join("never.db").exists(),
            "{name}: nothing was opened"
        );
    }
}
