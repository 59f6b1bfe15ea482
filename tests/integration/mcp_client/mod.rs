//! haico as an MCP client (SPEC §13), against real MCP servers, no mocks of MCP: a stdio server
//! written with the official Python SDK (`tests/fixtures/mcp/tools_server.py`) and haico's own
//! MCP server over streamable HTTP (one haico the client of another). The model is scripted
//! with the OpenAI wire mock; the agent, the HTTP API and the store are the real ones, on both
//! engines.

mod approval;
mod everything;
mod narrowing;
mod peer;
mod python;
mod startup;
mod tls;

use std::{path::PathBuf, time::Duration};

use haico::{
    agent::AgentConfig,
    http::AppState,
    mcp_client::{ClientOptions, McpConfig, McpServers},
};
use serde_json::{Value, json};

use crate::common::{
    Engine, TestDb,
    mock_llm::{MockLlm, Script},
    server::TestServer,
};

/// How long a server may take to become ready (a Python interpreter starting on a busy CI
/// machine).
pub const READY_WITHIN: Duration = Duration::from_secs(60);

/// The Python test server's path.
pub fn tools_server() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp/tools_server.py")
        .display()
        .to_string()
}

/// A stdio entry running the Python test server with `args`.
pub fn python_entry(args: &[&str]) -> Value {
    let mut all = vec![tools_server()];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({"command": "python3", "args": all, "env": {"TOOLS_SERVER_KEY": "k-123"}})
}

/// Timing for tests: quick reconnections, a short call timeout.
pub fn quick(call_timeout: Duration) -> ClientOptions {
    ClientOptions {
        call_timeout,
        connect_timeout: READY_WITHIN,
        backoff_min: Duration::from_millis(200),
        backoff_max: Duration::from_secs(2),
        ..ClientOptions::default()
    }
}

/// A real server whose agent talks to a scripted model and to the MCP servers of `config`
/// (`{"mcpServers": …}`, written to a file and read as `HAICO_MCP_SERVERS` would be).
pub struct McpSetup {
    pub db: TestDb,
    pub mock: MockLlm,
    pub server: TestServer,
    pub servers: McpServers,
    _dir: tempfile::TempDir,
}

impl McpSetup {
    pub async fn new(
        engine: Engine,
        config: Value,
        options: ClientOptions,
        scripts: Vec<Script>,
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, config.to_string()).expect("write the servers file");
        let config = McpConfig::load(&path).expect("the servers file is valid");
        let servers = McpServers::start(&config, options);
        let db = TestDb::new(engine).await;
        let mock = MockLlm::openai(scripts).await;
        let model = haico::agent::providers::build_model(&mock.config()).expect("model builds");
        let state = AppState::with_model(db.db.clone(), model, AgentConfig::default());
        state.agent().use_mcp_servers(servers.clone());
        let server = TestServer::with_state(state).await;
        Self {
            db,
            mock,
            server,
            servers,
            _dir: dir,
        }
    }

    /// `GET /api/mcp-servers`.
    pub async fn statuses(&self) -> Vec<Value> {
        mcp_servers(&self.server).await
    }

    /// Waits until server `name` is reported with `status` and `check` holds; returns it.
    pub async fn wait_for(
        &self,
        name: &str,
        status: &str,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        wait_for(&self.server, name, status, check).await
    }

    pub async fn cleanup(self) {
        self.servers.shutdown().await;
        self.server.shutdown().await;
        self.db.cleanup().await;
    }
}

/// `GET /api/mcp-servers` of `server`.
pub async fn mcp_servers(server: &TestServer) -> Vec<Value> {
    server
        .get("/api/mcp-servers")
        .await
        .expect(200)
        .as_array()
        .expect("an array")
        .clone()
}

/// Polls `GET /api/mcp-servers` until `name` has `status` and `check` holds.
pub async fn wait_for(
    server: &TestServer,
    name: &str,
    status: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + READY_WITHIN;
    loop {
        let all = mcp_servers(server).await;
        let found = all.iter().find(|s| s["name"] == name).cloned();
        if let Some(found) = &found
            && found["status"] == status
            && check(found)
        {
            return found.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "server `{name}` did not reach `{status}`: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The tool names a model request offered.
pub fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().expect("name").to_string())
        .collect()
}

/// The envelopes of the `step` frames, with their tool names.
pub fn steps(frames: &[crate::common::sse::Frame]) -> Vec<(String, Value)> {
    frames
        .iter()
        .filter(|f| f.event == "step")
        .map(|f| {
            (
                f.data["tool"].as_str().expect("step tool").to_string(),
                f.data["result"].clone(),
            )
        })
        .collect()
}
