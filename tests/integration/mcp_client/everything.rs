//! The protocol's corners, against the reference server `@modelcontextprotocol/server-everything`
//! (npm, installed by `.ci/run`): its tools listed and offered under their own names (dashes
//! included), a plain answer, an image and resource links summarised rather than passed on, a
//! long-running operation that sends progress notifications on the way, the same cut short by
//! the call timeout (and the server usable right after), and a child environment that holds
//! nothing of haico's. No database is involved: this is `McpServers` as the agent uses it.

use std::time::Duration;

use haico::mcp_client::{CallError, McpConfig, McpServers, Status};
use serde_json::{Map, Value, json};

use super::quick;
use crate::common::needs::EVERYTHING;

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an object")
}

async fn ready(servers: &McpServers) {
    let deadline = tokio::time::Instant::now() + super::READY_WITHIN;
    while servers.statuses()[0].status != Status::Ready {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            servers.statuses()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_s_corners() {
    needs!(everything);
    let command = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EVERYTHING);
    let config = McpConfig::parse(
        std::path::Path::new("everything.json"),
        &json!({"mcpServers": {"every": {"command": command.display().to_string(), "args": ["stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let servers = McpServers::start(&config, quick(Duration::from_secs(3)));
    ready(&servers).await;

    let offered: Vec<String> = servers.offered().into_iter().map(|t| t.full_name).collect();
    for name in [
        "every__echo",
        "every__get-sum",
        "every__get-tiny-image",
        "every__trigger-long-running-operation",
    ] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not in {offered:?}"
        );
    }
    let mut sorted = offered.clone();
    sorted.sort();
    assert_eq!(offered, sorted);

    let echo = servers
        .call("every__echo", object(json!({"message": "hello"})))
        .await
        .unwrap();
    assert_eq!(echo.text, "Echo: hello");
    assert!(!echo.is_error);

    let image = servers
        .call("every__get-tiny-image", Map::new())
        .await
        .unwrap();
    assert!(
        image.text.contains("[image content (image/png"),
        "{}",
        image.text
    );
    assert!(
        image.text.len() < 2_000,
        "the image's bytes are not passed on: {}",
        image.text.len()
    );

    let links = servers
        .call("every__get-resource-links", object(json!({"count": 2})))
        .await
        .unwrap();
    assert!(links.text.contains("[link to resource"), "{}", links.text);

    // Progress notifications on the way do not disturb the answer.
    let long = servers
        .call(
            "every__trigger-long-running-operation",
            object(json!({"duration": 1, "steps": 3})),
        )
        .await
        .unwrap();
    assert!(long.text.contains("completed"), "{}", long.text);

    // Past the call timeout the wait ends; the server stays usable.
    let slow = servers
        .call(
            "every__trigger-long-running-operation",
            object(json!({"duration": 20, "steps": 2})),
        )
        .await;
    assert!(
        matches!(slow, Err(CallError::Timeout { secs: 3, .. })),
        "{slow:?}"
    );
    let sum = servers
        .call("every__get-sum", object(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert!(sum.text.contains('5'), "{}", sum.text);

    // The child's environment holds nothing of haico's.
    let env = servers.call("every__get-env", Map::new()).await.unwrap();
    assert!(
        env.text.contains("PATH") && !env.text.contains("HAICO_") && !env.text.contains("CARGO_"),
        "{}",
        env.text
    );

    servers.shutdown().await;
}
