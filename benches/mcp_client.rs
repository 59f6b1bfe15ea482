//! What a call of another MCP server's tool costs haico, over stdio (SPEC §13; the target is
//! under 2 ms median beyond the server's own time).
//!
//! The server is this very bench binary, started again as a child with `HAICO_BENCH_ECHO=1`:
//! an rmcp stdio server whose one tool, `echo`, answers its text at once, so its own time is a
//! few microseconds and what is measured is the call's path: haico's client, the pipes, the
//! server's protocol layer and back.
//!
//! - `rmcp_direct`: the same call made with rmcp's client alone (the floor: JSON-RPC over the
//!   child's pipes);
//! - `haico_call`: `McpServers::call` (name lookup, timeout, result rendering, metrics);
//! - `python_haico_call` (when `python3` has the MCP SDK): the same through the Python test
//!   server, for scale: there the server's own time dominates.
//!
//! `cargo bench --bench mcp_client`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{path::PathBuf, sync::Arc, time::Duration};

use criterion::Criterion;
use haico::mcp_client::{ClientOptions, McpConfig, McpServers, Status};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
    transport::TokioChildProcess,
};
use serde_json::{Map, Value, json};

const ECHO_ENV: &str = "HAICO_BENCH_ECHO";

/// The child's side: one tool that answers at once.
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let Value::Object(schema) = schema else {
            return Err(ErrorData::internal_error("schema", None));
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "Answers its text.",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .and_then(|args| args.get("text").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

async fn serve_echo() {
    let service = Echo
        .serve(rmcp::transport::stdio())
        .await
        .expect("echo server handshake");
    let _ = service.waiting().await;
}

fn echo_command() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(std::env::current_exe().expect("bench binary"));
    cmd.env(ECHO_ENV, "1").kill_on_drop(true);
    cmd
}

fn args() -> Map<String, Value> {
    let Value::Object(map) = json!({"text": "a short answer of a few words"}) else {
        unreachable!()
    };
    map
}

fn python_has_mcp() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mcp.server.fastmcp"])
        .output()
        .is_ok_and(|out| out.status.success())
}

async fn wait_ready(servers: &McpServers) {
    for _ in 0..600 {
        if servers.statuses().iter().all(|s| s.status == Status::Ready) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("servers not ready: {:?}", servers.statuses());
}

fn bench(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let exe = std::env::current_exe().expect("bench binary");
    let python = python_has_mcp();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/tools_server.py");
    let mut servers =
        json!({"echo": {"command": exe.display().to_string(), "env": {ECHO_ENV: "1"}}});
    if python {
        servers["py"] = json!({"command": "python3", "args": [script.display().to_string()]});
    }
    let config = McpConfig::parse(
        std::path::Path::new("bench.json"),
        &json!({"mcpServers": servers}).to_string(),
    )
    .expect("config");
    let (haico, direct) = rt.block_on(async {
        let haico = McpServers::start(&config, ClientOptions::default());
        wait_ready(&haico).await;
        let direct =
            ().serve(TokioChildProcess::new(echo_command()).expect("spawn echo"))
                .await
                .expect("direct handshake");
        (haico, direct)
    });

    let mut group = c.benchmark_group("mcp_client/stdio");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(100);
    group.bench_function("rmcp_direct", |b| {
        b.to_async(rt).iter(|| async {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = Some(args());
            let result = direct.peer().call_tool(params).await.expect("call");
            assert_eq!(result.is_error, Some(false));
        });
    });
    group.bench_function("haico_call", |b| {
        b.to_async(rt).iter(|| async {
            let outcome = haico.call("echo__echo", args()).await.expect("call");
            assert!(!outcome.is_error && outcome.text.starts_with("a short"));
        });
    });
    if python {
        group.bench_function("python_haico_call", |b| {
            b.to_async(rt).iter(|| async {
                let mut args = Map::new();
                args.insert("text".into(), json!("hi"));
                let outcome = haico.call("py__echo", args).await.expect("call");
                assert_eq!(outcome.text, "echo: hi");
            });
        });
    } else {
        println!("mcp_client: python3 has no MCP SDK; python_haico_call skipped");
    }
    group.finish();
    rt.block_on(async {
        let _ = direct.cancel().await;
        haico.shutdown().await;
    });
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    if std::env::var_os(ECHO_ENV).is_some() {
        rt.block_on(serve_echo());
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion, &rt);
    criterion.final_summary();
}
