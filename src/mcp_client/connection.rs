//! Keeping one server connected: start it (a child process, or an HTTP session), read its
//! tools, re-read them when it says they changed, notice when it dies, and start it again
//! after a backoff (doubling from `backoff_min` to `backoff_max`, reset once it is ready).
//!
//! A child gets a clean environment (the usual `PATH`, `HOME`, locale… plus the entry's
//! `env`), never haico's own: haico's variables hold its database URL and API keys, which are
//! none of a third-party server's business. Its standard error is logged line by line under the
//! server's name, and the last lines are kept to explain a server that dies while starting.
//! Children are killed when their connection is dropped (`kill_on_drop`), so they end with
//! haico.

use std::{
    collections::VecDeque,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient, ServiceError, ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation},
    service::{ClientInitializeError, NotificationContext, Peer, RunningService},
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use tokio::{io::AsyncBufReadExt, sync::mpsc};
use tokio_util::sync::CancellationToken;

use crate::{
    mcp_client::CallError, mcp_client::ClientOptions, mcp_client::RemoteTool, mcp_client::Server,
    mcp_client::Status, mcp_client::config::Transport,
};

/// Variables of haico's environment a child inherits; everything else it gets from its entry.
const INHERITED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// Lines of a child's standard error kept to explain why it stopped.
const STDERR_TAIL: usize = 8;

/// The client side of one connection: tells the supervisor when the server's tools changed.
struct Listener {
    changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("haico", env!("CARGO_PKG_VERSION")),
        )
    }
}

type Connection = RunningService<RoleClient, Listener>;

/// Keeps `server` connected until `stop` is cancelled.
pub(super) async fn supervise(
    server: Arc<Server>,
    options: ClientOptions,
    stop: CancellationToken,
) {
    let mut backoff = options.backoff_min;
    loop {
        server.update(|state| {
            state.status = Status::Connecting;
            state.peer = None;
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, mut changed) = mpsc::unbounded_channel();
        let attempt = async {
            let connection = connect(&server, Listener { changed: tx }, &tail).await?;
            let tools = list_tools(connection.peer(), options.connect_timeout).await?;
            Ok::<_, String>((connection, tools))
        };
        let attempt = tokio::select! {
            attempt = tokio::time::timeout(options.connect_timeout, attempt) => attempt,
            () = stop.cancelled() => return,
        };
        match attempt {
            Ok(Ok((connection, tools))) => {
                tracing::info!(tools = tools.len(), "MCP server ready");
                let peer = connection.peer().clone();
                server.update(|state| {
                    state.status = Status::Ready;
                    state.error = None;
                    state.tools = Arc::from(tools);
                    state.peer = Some(peer.clone());
                });
                backoff = options.backoff_min;
                let ended =
                    serve_until_closed(&server, connection, &peer, &mut changed, &stop, options)
                        .await;
                if ended == Ended::Stopped {
                    return;
                }
                let reason = with_tail("the server closed the connection".to_string(), &tail);
                tracing::warn!(error = %reason, "MCP server went away; reconnecting");
                server.update(|state| {
                    state.status = Status::Failed;
                    state.error = Some(reason);
                    state.peer = None;
                });
            }
            Ok(Err(reason)) => {
                let reason = with_tail(reason, &tail);
                tracing::warn!(error = %reason, retry_in_ms = backoff.as_millis(), "MCP server could not be started");
                server.update(|state| {
                    state.status = Status::Failed;
                    state.error = Some(reason);
                });
            }
            Err(_) => {
                let reason = with_tail(
                    format!(
                        "it did not finish starting (handshake and tool list) within {} s",
                        options.connect_timeout.as_secs()
                    ),
                    &tail,
                );
                tracing::warn!(error = %reason, "MCP server could not be started");
                server.update(|state| {
                    state.status = Status::Failed;
                    state.error = Some(reason);
                });
            }
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = stop.cancelled() => return,
        }
        backoff = (backoff * 2).min(options.backoff_max);
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Closed,
    Stopped,
}

/// Waits for the connection to close, re-reading the tool list whenever the server says it
/// changed; on `stop`, closes it.
async fn serve_until_closed(
    server: &Server,
    connection: Connection,
    peer: &Peer<RoleClient>,
    changed: &mut mpsc::UnboundedReceiver<()>,
    stop: &CancellationToken,
    options: ClientOptions,
) -> Ended {
    let cancel = connection.cancellation_token();
    let closed = connection.waiting();
    tokio::pin!(closed);
    loop {
        tokio::select! {
            _ = &mut closed => return Ended::Closed,
            Some(()) = changed.recv() => {
                // Several notifications in a row need one read.
                while changed.try_recv().is_ok() {}
                match list_tools(peer, options.connect_timeout).await {
                    Ok(tools) => {
                        tracing::info!(tools = tools.len(), "MCP server's tool list changed");
                        server.update(|state| state.tools = Arc::from(tools));
                    }
                    Err(err) => tracing::warn!(error = %err, "could not re-read the tool list"),
                }
            }
            () = stop.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(5), &mut closed).await;
                return Ended::Stopped;
            }
        }
    }
}

/// Starts the server and completes the handshake.
async fn connect(
    server: &Server,
    listener: Listener,
    tail: &Arc<Mutex<VecDeque<String>>>,
) -> Result<Connection, String> {
    match &server.config.transport {
        Transport::Stdio { command, args, env } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).env_clear().kill_on_drop(true);
            for key in INHERITED_ENV {
                if let Some(value) = std::env::var_os(key) {
                    cmd.env(key, value);
                }
            }
            for (key, value) in env {
                cmd.env(key, value.expose());
            }
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|err| format!("could not start `{command}`: {err}"))?;
            if let Some(stderr) = stderr {
                let tail = Arc::clone(tail);
                let name = server.config.name.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::info!(server = %name, "{}", line.chars().take(2_000).collect::<String>());
                        if let Ok(mut tail) = tail.lock() {
                            if tail.len() == STDERR_TAIL {
                                tail.pop_front();
                            }
                            tail.push_back(line.chars().take(300).collect());
                        }
                    }
                });
            }
            listener
                .serve(transport)
                .await
                .map_err(|err| format!("the MCP handshake failed: {err}"))
        }
        Transport::Http { url, headers } => {
            let mut custom = std::collections::HashMap::new();
            for (key, value) in headers {
                // Checked when the file was read.
                if let (Ok(name), Ok(value)) = (
                    reqwest::header::HeaderName::from_bytes(key.as_bytes()),
                    reqwest::header::HeaderValue::from_str(value.expose()),
                ) {
                    custom.insert(name, value);
                }
            }
            use_ring_for_tls();
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::from_config(config);
            listener
                .serve(transport)
                .await
                .map_err(|err| format!("the MCP handshake with {url} failed: {}", causes(&err)))
        }
    }
}

/// A failed handshake with every cause under it, outermost first: rmcp's message alone says
/// only that sending failed, while the person needs the reason (a refused connection, a
/// certificate not trusted). A certificate refusal also says which setting fixes it.
fn causes(err: &ClientInitializeError) -> String {
    let mut parts = vec![err.to_string()];
    // The transport's error is a field rmcp does not mark as the source; start from it.
    let mut next: Option<&(dyn std::error::Error + 'static)> = match err {
        ClientInitializeError::TransportError { error, .. } => Some(error),
        other => std::error::Error::source(other),
    };
    while let Some(cause) = next {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        next = cause.source();
    }
    let mut text = parts.join(": ");
    // The HTTP client's own causes are not linked as sources (rmcp wraps it as a plain field),
    // but its debug form names them: turn the two a person can act on into what to do.
    let debug = format!("{err:?}");
    if let Some(reason) = debug
        .split_once("InvalidCertificate(")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(reason, _)| reason)
    {
        text.push_str(&format!(
            " (the server's TLS certificate is not trusted: {reason}; if a private authority \
             signed it, start haico with SSL_CERT_FILE naming a PEM file that holds that \
             authority)"
        ));
    } else if debug.contains("ConnectionRefused") {
        text.push_str(" (the connection was refused: is the server running at that address?)");
    }
    text
}

/// Makes `ring` the process's TLS crypto provider, once, before the first HTTP connection: the
/// MCP client's HTTP stack (reqwest 0.13 through rmcp) is built without a provider of its own and
/// panics when a client is built before one is installed. Another part of the process that
/// installed one first wins, which is as good. Public for code that builds rmcp's HTTP client
/// itself (the tests' MCP clients).
pub fn use_ring_for_tls() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The server's tools, every page.
async fn list_tools(peer: &Peer<RoleClient>, timeout: Duration) -> Result<Vec<RemoteTool>, String> {
    let tools = tokio::time::timeout(timeout, peer.list_all_tools())
        .await
        .map_err(|_| format!("it did not list its tools within {} s", timeout.as_secs()))?
        .map_err(|err| format!("it could not list its tools: {err}"))?;
    Ok(tools
        .into_iter()
        .map(|tool| RemoteTool {
            name: tool.name.to_string(),
            description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
            input_schema: (*tool.input_schema).clone(),
        })
        .collect())
}

/// `reason`, followed by the last lines the child wrote on its standard error, if any.
fn with_tail(reason: String, tail: &Mutex<VecDeque<String>>) -> String {
    let lines: Vec<String> = tail
        .lock()
        .map(|tail| tail.iter().cloned().collect())
        .unwrap_or_default();
    if lines.is_empty() {
        reason
    } else {
        format!("{reason}; its last output: {}", lines.join(" | "))
    }
}

/// What a failed request means for the model.
pub(super) fn call_error(server: &str, err: ServiceError) -> CallError {
    match err {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            CallError::Closed(server.to_string())
        }
        ServiceError::McpError(error) => CallError::Refused {
            server: server.to_string(),
            message: error.message.to_string(),
        },
        other => CallError::Refused {
            server: server.to_string(),
            message: other.to_string(),
        },
    }
}
