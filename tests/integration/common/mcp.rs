//! Support for the MCP tests: rmcp clients over stdio (the real `haico mcp` binary) and over
//! streamable HTTP, a handler that records resource notifications, and envelope helpers.

use std::{process::Stdio, time::Duration};

use rmcp::{
    ClientHandler, RoleClient, ServiceError, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ErrorCode, ProtocolVersion,
        ResourceUpdatedNotificationParam,
    },
    service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService},
    transport::{StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// How long any single wait of these tests may take.
pub const WAIT: Duration = Duration::from_secs(15);

/// A resource notification as the client received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `notifications/resources/updated` for this URI.
    Updated(String),
    /// `notifications/resources/list_changed`.
    ListChanged,
}

/// A client handler that forwards resource notifications to a channel.
pub struct Recorder {
    tx: mpsc::UnboundedSender<Note>,
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.tx.send(Note::Updated(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.tx.send(Note::ListChanged);
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// Which lifecycle a client opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// The classic `initialize` handshake (protocol versions up to 2025-11-25).
    Initialize,
    /// `server/discover` and per-request metadata (protocol 2026-07-28).
    Discover,
}

impl Lifecycle {
    fn mode(self) -> ClientLifecycleMode {
        match self {
            Lifecycle::Initialize => ClientLifecycleMode::Initialize,
            Lifecycle::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}

/// The `haico` binary with a clean environment.
pub fn haico_command() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_haico"));
    for var in [
        "HAICO_DATABASE_URL",
        "HAICO_BIND",
        "HAICO_API_TOKEN",
        "HAICO_MCP_THREAD",
        "HAICO_MCP_AS",
        "HAICO_LLM_PROVIDER",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUST_LOG", "info").kill_on_drop(true);
    cmd
}

/// `haico mcp --thread <thread>` on `database_url`, with an rmcp client talking to it.
pub async fn stdio_client(
    database_url: &str,
    thread: &str,
    lifecycle: Lifecycle,
) -> (Client, mpsc::UnboundedReceiver<Note>) {
    stdio_client_as(database_url, thread, None, lifecycle).await
}

/// `haico mcp --thread <thread> [--as <name>]` on `database_url`, with an rmcp client.
pub async fn stdio_client_as(
    database_url: &str,
    thread: &str,
    as_name: Option<&str>,
    lifecycle: Lifecycle,
) -> (Client, mpsc::UnboundedReceiver<Note>) {
    let mut cmd = haico_command();
    cmd.args(["mcp", "--thread", thread]);
    if let Some(name) = as_name {
        cmd.args(["--as", name]);
    }
    cmd.env("HAICO_DATABASE_URL", database_url)
        .env("RUST_LOG", "warn");
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn haico mcp");
    connect(transport, lifecycle).await
}

/// An rmcp streamable HTTP client for `url`.
pub async fn http_client(
    url: &str,
    lifecycle: Lifecycle,
) -> (Client, mpsc::UnboundedReceiver<Note>) {
    haico::mcp_client::use_ring_for_tls();
    connect(
        StreamableHttpClientTransport::from_uri(url.to_string()),
        lifecycle,
    )
    .await
}

async fn connect<T, E, A>(
    transport: T,
    lifecycle: Lifecycle,
) -> (Client, mpsc::UnboundedReceiver<Note>)
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let recorder = Recorder { tx };
    let client = tokio::time::timeout(WAIT, async {
        match lifecycle {
            Lifecycle::Initialize => recorder.serve(transport).await,
            Lifecycle::Discover => {
                recorder
                    .serve_with_lifecycle(transport, lifecycle.mode())
                    .await
            }
        }
    })
    .await
    .expect("the MCP handshake finishes in time")
    .expect("the MCP handshake succeeds");
    (client, rx)
}

/// Calls a tool with a JSON object of arguments.
pub async fn call(
    client: &Client,
    tool: &str,
    args: Value,
) -> Result<CallToolResult, ServiceError> {
    let args: Map<String, Value> = match args {
        Value::Object(map) => map,
        other => panic!("tool arguments must be an object, got {other}"),
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = Some(args);
    tokio::time::timeout(WAIT, client.call_tool(params))
        .await
        .expect("the tool call answers in time")
}

/// The envelope of a tool result, checking that the text content and `structuredContent`
/// carry the same envelope and that `isError` mirrors `success`. A successful call that made
/// a chart has the chart's PNG after the text ([`chart_png`]); any other has the text alone.
pub fn envelope(result: &CallToolResult) -> Value {
    let images = chart_png(result).into_iter().count();
    assert_eq!(
        result.content.len(),
        1 + images,
        "the text, and a chart's image: {result:?}"
    );
    let text = result.content[0].as_text().expect("text content");
    let from_text: Value = serde_json::from_str(&text.text).expect("the text is JSON");
    assert_eq!(
        result.structured_content.as_ref(),
        Some(&from_text),
        "structuredContent is the envelope"
    );
    let success = from_text["success"]
        .as_bool()
        .expect("envelope has success");
    assert_eq!(result.is_error, Some(!success), "isError mirrors success");
    from_text
}

/// The PNG image of a tool result that made a chart (the block after the text), decoded from
/// base64; `None` when the result has no second block.
pub fn chart_png(result: &CallToolResult) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let block = result.content.get(1)?;
    let image = block.as_image().expect("the second block is an image");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        result.is_error,
        Some(false),
        "only a success carries a chart"
    );
    Some(
        base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .expect("the image is base64"),
    )
}

/// Calls a tool that must succeed; returns its summary.
pub async fn call_ok(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args.clone())
        .await
        .unwrap_or_else(|err| panic!("{tool}({args}) was refused: {err}"));
    let env = envelope(&result);
    assert_eq!(
        env["success"],
        Value::Bool(true),
        "{tool}({args}) failed: {env}"
    );
    env["summary"].as_str().expect("summary").to_string()
}

/// The JSON-RPC error code of a refused request.
pub fn error_code(err: &ServiceError) -> ErrorCode {
    match err {
        ServiceError::McpError(data) => data.code,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Waits for `wanted`, skipping other notifications; panics after `within`.
pub async fn expect_note(rx: &mut mpsc::UnboundedReceiver<Note>, wanted: &Note, within: Duration) {
    let found = tokio::time::timeout(within, async {
        while let Some(note) = rx.recv().await {
            if note == *wanted {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(found, Ok(true), "no {wanted:?} within {within:?}");
}

/// Drops whatever notifications arrived so far.
pub fn drain(rx: &mut mpsc::UnboundedReceiver<Note>) {
    while rx.try_recv().is_ok() {}
}

/// The text of a resource read.
pub fn resource_text(result: &rmcp::model::ReadResourceResult) -> (String, Option<String>) {
    match &result.contents[..] {
        [
            rmcp::model::ResourceContents::TextResourceContents {
                text, mime_type, ..
            },
        ] => (text.clone(), mime_type.clone()),
        other => panic!("expected one text content, got {other:?}"),
    }
}

/// A resource read parsed as JSON.
pub async fn read_json(client: &Client, uri: &str) -> Value {
    let result = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap_or_else(|err| panic!("reading {uri}: {err}"));
    let (text, mime) = resource_text(&result);
    assert_eq!(mime.as_deref(), Some("application/json"));
    serde_json::from_str(&text).expect("resource is JSON")
}

/// The URI of a panel of `thread`.
pub fn panel(thread: &str, name: &str) -> String {
    format!("haico://thread/{thread}/{name}")
}

/// Tool specs as `GET /api/tools` answers, keyed for comparison with MCP tools.
pub fn assert_tools_match(tools: &[rmcp::model::Tool], api: &Value) {
    let api = api.as_array().expect("tool list");
    assert_eq!(tools.len(), 16);
    assert_eq!(api.len(), tools.len());
    for (tool, spec) in tools.iter().zip(api) {
        assert_eq!(tool.name, spec["name"].as_str().unwrap());
        assert_eq!(tool.description.as_deref(), spec["description"].as_str());
        assert_eq!(
            Value::Object((*tool.input_schema).clone()),
            spec["parameters"],
            "schema of {}",
            tool.name
        );
        assert!(
            tool.input_schema["required"]
                .as_array()
                .unwrap()
                .contains(&Value::String("action_and_reasoning".into())),
            "{} requires action_and_reasoning",
            tool.name
        );
    }
}
