//! [`HaicoMcp`]: the MCP server handler for one thread — tools, resources, subscriptions.
//!
//! The handler is the same for both transports; only how it learns its thread differs. Over
//! stdio the thread is fixed when the process starts. Over HTTP the route `/mcp/{thread_id}`
//! puts the thread on every request ([`McpThread`]); a session (protocol versions with the
//! `initialize` handshake) is bound to the thread of its first request and refuses requests
//! for another one, and a stateless request (2026-07-28) simply uses its own.

use std::{
    borrow::Cow,
    collections::HashSet,
    sync::{Arc, Mutex, OnceLock},
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
        InitializeResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, ServerCapabilities, ServerConfig, SubscribeRequestParams,
        SubscriptionFilter, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::caller::Binding;
pub use super::caller::{McpCaller, McpThread, SessionCloser};
use super::{
    notify::{self, Audience},
    resources,
    sessions::McpSessions,
    tools,
};
use crate::{tools::ToolRuntime, tools::build_tools};
use haico_core::{
    events::last_seq, events::subscribe, people::Op, people::ToolUse, people::permits,
};
use haico_store::{StoreError, ThreadId};

/// The protocol versions this server speaks: every revision rmcp implements, from 2024-11-05
/// (with the `initialize` handshake) to 2026-07-28 (without it).
pub fn supported_protocol_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::KNOWN_VERSIONS
}

const INSTRUCTIONS: &str = "This server is one thread of haico, a workspace a person and an AI \
co-construct: an objective, a working document, a plan of steps, the person's preferences \
(hard or soft; locked ones only the person may change) and artifacts such as charts. Change it \
only through the tools, and give every call an `action_and_reasoning`: one short, plain sentence \
for the person saying what you do and why. Plan steps and preferences are addressed by their \
1-based position in the list as it stands when the call starts; list them first. Every result \
is a JSON envelope: {\"success\": true, \"summary\": …} or {\"success\": false, \"error\": …}. \
The panels are also resources (haico://thread/{thread_id}/objective, document, plan, \
preferences, artifacts) that you may read and subscribe to: the person edits them too.";

/// A read of a thread's last event number, started when a `subscriptions/listen` arrived.
type Baseline = JoinHandle<Result<i64, StoreError>>;

/// The server handler. One value serves one stdio process, one HTTP session or one stateless
/// HTTP request; following tasks it starts end when it is dropped.
pub struct HaicoMcp {
    runtime: ToolRuntime,
    pub(super) binding: Binding,
    /// URIs subscribed with `resources/subscribe`.
    subscribed: Arc<Mutex<HashSet<String>>>,
    /// Over HTTP, the stored sessions, which share a session's subscriptions between replicas.
    stored: Option<McpSessions>,
    /// Over HTTP, the session's id, once a request named it.
    session_id: OnceLock<String>,
    /// Whether the session's follower runs.
    following: tokio::sync::Mutex<bool>,
    /// Where each `subscriptions/listen` starts: the thread's last event number, read when the
    /// request arrived (before its acknowledgment went out), so nothing that happens in between
    /// is missed.
    baselines: Mutex<Vec<(ThreadId, Baseline)>>,
    /// Cancelled on drop: stops the session's follower.
    stop: CancellationToken,
    /// Over HTTP, how to close the session once its caller may no longer read the thread.
    close: Option<SessionCloser>,
}

impl HaicoMcp {
    /// A server for `thread` (stdio), acting as `caller`.
    pub fn for_thread(runtime: ToolRuntime, thread: ThreadId, caller: McpCaller) -> Self {
        Self::new(runtime, Binding::Fixed(thread, Box::new(caller)))
    }

    /// A server that takes its thread from each request's [`McpThread`] (HTTP).
    pub fn per_request(runtime: ToolRuntime) -> Self {
        Self::new(runtime, Binding::FromRequest(OnceLock::new()))
    }

    /// Shares the session's subscriptions through `sessions`, so that the replica holding its
    /// notification stream knows what was subscribed on another one.
    pub fn sharing(mut self, sessions: McpSessions) -> Self {
        self.stored = Some(sessions);
        self
    }

    /// Closes the HTTP session with `close` once its caller may no longer read the thread, so
    /// its notification stream ends as REST's events stream does.
    pub fn closing_with(mut self, close: SessionCloser) -> Self {
        self.close = Some(close);
        self
    }

    /// The HTTP session a request belongs to, when sessions are stored.
    fn stored_session(
        &self,
        extensions: &rmcp::model::Extensions,
    ) -> Option<(McpSessions, String)> {
        let sessions = self.stored.clone()?;
        let id = match self.session_id.get() {
            Some(id) => id.clone(),
            None => {
                let named = extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.headers.get("mcp-session-id"))
                    .and_then(|value| value.to_str().ok())?;
                self.session_id.get_or_init(|| named.to_owned()).clone()
            }
        };
        Some((sessions, id))
    }

    fn new(runtime: ToolRuntime, binding: Binding) -> Self {
        Self {
            runtime,
            binding,
            subscribed: Arc::default(),
            stored: None,
            session_id: OnceLock::new(),
            following: tokio::sync::Mutex::new(false),
            baselines: Mutex::new(Vec::new()),
            stop: CancellationToken::new(),
            close: None,
        }
    }

    /// Starts the session's follower unless it runs; returns once it is subscribed, so every
    /// change after this call is announced.
    async fn follow_session(
        &self,
        peer: rmcp::Peer<RoleServer>,
        thread: ThreadId,
        stored: Option<(McpSessions, String)>,
        caller: &McpCaller,
    ) -> Result<(), ErrorData> {
        let mut following = self.following.lock().await;
        if *following {
            return Ok(());
        }
        let db = self.runtime.database().clone();
        let events = subscribe(db, self.runtime.bus().clone(), &thread, None)
            .await
            .map_err(|err| resources::storage_error(err.0.into()))?;
        let session = stored.as_ref().map(|(_, id)| id.clone());
        let audience = Audience::Session {
            peer,
            subscribed: Arc::clone(&self.subscribed),
            stored,
        };
        let stop = self.stop.clone();
        let lost = caller.access_lost(thread.clone());
        let close = self.close.clone();
        tokio::spawn(async move {
            tokio::select! {
                followed = notify::follow(events, thread, audience, stop.cancelled_owned()) => {
                    if let Err(err) = followed {
                        tracing::warn!(error = %err, "resource notifications stopped");
                    }
                }
                // The caller may no longer read the thread: no more notifications, and the
                // session (with its stream) ends.
                () = lost => {
                    if let (Some(close), Some(session)) = (close, session) {
                        close(session).await;
                    }
                }
            }
        });
        *following = true;
        Ok(())
    }
}

impl Drop for HaicoMcp {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Ok(baselines) = self.baselines.lock() {
            for (_, task) in baselines.iter() {
                task.abort();
            }
        }
    }
}

impl ServerHandler for HaicoMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new("haico", env!("CARGO_PKG_VERSION"))
                .with_title("haico workspace")
                .with_description(
                    "A shared workspace (objective, document, plan, preferences, charts) for \
                     co-constructing a solution with a person",
                ),
        )
        .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(supported_protocol_versions())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // A session belongs to the thread it was opened on.
        self.binding.thread(&context.extensions)?;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let thread = self.binding.thread(&context.extensions)?;
        let toolset = build_tools(&thread);
        if toolset.get(&request.name).is_none() {
            // An unknown tool is a protocol error (the spec's -32602); invalid arguments are
            // the tool's own failure envelope, so the model can correct itself.
            let names: Vec<&str> = toolset.iter().map(|tool| tool.name()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; the tools are: {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        }
        let caller = self.binding.caller(&context.extensions);
        let read_only = toolset
            .get(&request.name)
            .is_some_and(|tool| tool.read_only());
        if let Err(refusal) = permits(caller.access, Op::CallTool(ToolUse::of(read_only))) {
            return Err(ErrorData::invalid_request(refusal.to_string(), None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let runtime = self.runtime.acting_as(caller.actor);
        let calling = runtime.call(&toolset, &request.name, arguments);
        // A client that traces its calls names its span in `_meta` (MCP's SEP-414): the call
        // joins that trace, over stdio as over HTTP.
        let call = match request.meta.as_ref() {
            Some(meta) if crate::telemetry::enabled() && meta.get_traceparent().is_some() => {
                let span = tracing::info_span!(
                    "mcp_request",
                    otel.name = format!("tools/call {}", request.name),
                    otel.kind = "server",
                    mcp.method.name = "tools/call",
                );
                crate::telemetry::propagation::adopt_from_meta(&span, &meta.0.0);
                tracing::Instrument::instrument(calling, span).await
            }
            _ => calling.await,
        };
        Ok(tools::call_result(&call).await.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let thread = self.binding.thread(&context.extensions)?;
        let list = resources::list(self.runtime.workspaces(), &thread)
            .await
            .map_err(resources::storage_error)?;
        Ok(ListResourcesResult::with_all_items(list))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let thread = self.binding.thread(&context.extensions)?;
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(&thread),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let thread = self.binding.thread(&context.extensions)?;
        let contents = resources::read(self.runtime.workspaces(), &thread, &request.uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let thread = self.binding.thread(&context.extensions)?;
        if !resources::belongs_to(&request.uri, &thread) {
            return Err(resources::not_found(&request.uri, &thread));
        }
        let stored = self.stored_session(&context.extensions);
        let caller = self.binding.caller(&context.extensions);
        self.follow_session(context.peer.clone(), thread, stored.clone(), &caller)
            .await?;
        if let Some((sessions, id)) = stored {
            sessions
                .subscribe(&id, &request.uri)
                .await
                .map_err(session_error)?;
        }
        if let Ok(mut subscribed) = self.subscribed.lock() {
            subscribed.insert(request.uri);
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some((sessions, id)) = self.stored_session(&context.extensions) {
            sessions
                .unsubscribe(&id, &request.uri)
                .await
                .map_err(session_error)?;
        }
        if let Ok(mut subscribed) = self.subscribed.lock() {
            subscribed.remove(&request.uri);
        }
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Sessions hear about new artifacts (resources/list_changed) without subscribing.
        let Ok(thread) = self.binding.thread(&context.extensions) else {
            return;
        };
        let stored = self.stored_session(&context.extensions);
        let caller = self.binding.caller(&context.extensions);
        if let Err(err) = self
            .follow_session(context.peer.clone(), thread, stored, &caller)
            .await
        {
            tracing::warn!(error = %err.message, "cannot follow the thread");
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        let thread = self.binding.thread_of_filter(requested);
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| {
                    thread
                        .as_ref()
                        .is_some_and(|thread| resources::belongs_to(uri, thread))
                })
                .cloned()
                .collect()
        });
        // The acknowledgment goes out before `listen` runs; read where the log stands now.
        if let Some(thread) = thread {
            let db = self.runtime.database().clone();
            let id = thread.clone();
            let task = tokio::spawn(async move { last_seq(&db, &id).await });
            if let Ok(mut baselines) = self.baselines.lock() {
                baselines.push((thread, task));
            }
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let thread = self.binding.thread(&context.request_context().extensions)?;
        let baseline = self.baselines.lock().ok().and_then(|mut baselines| {
            let at = baselines.iter().position(|(t, _)| *t == thread)?;
            Some(baselines.remove(at).1)
        });
        let last_seen = match baseline {
            Some(task) => task.await.ok().and_then(Result::ok),
            None => None,
        };
        let events = subscribe(
            self.runtime.database().clone(),
            self.runtime.bus().clone(),
            &thread,
            last_seen,
        )
        .await
        .map_err(|err| resources::storage_error(err.0.into()))?;
        let audience = Audience::Listener(context.sink().clone());
        // The listener ends once its caller may no longer read the thread.
        let lost = self
            .binding
            .caller(&context.request_context().extensions)
            .access_lost(thread.clone());
        tokio::select! {
            followed = notify::follow(events, thread, audience, context.cancelled()) => {
                followed.map_err(|err| resources::storage_error(err.0.into()))
            }
            () = lost => Ok(()),
        }
    }
}

/// A stored session that cannot be read or written.
fn session_error(err: super::sessions::McpSessionError) -> ErrorData {
    tracing::error!(error = %err, "storing the MCP session failed");
    ErrorData::internal_error("the session could not be stored; try again", None)
}
