//! Who an MCP request is for and acts as: [`McpThread`] and [`McpCaller`], put into an HTTP
//! request by the `/mcp/{thread_id}` route (fixed for a stdio process), and how a session whose
//! caller lost access is closed ([`SessionCloser`]); and how the handler resolves both for a
//! request ([`Binding`]: fixed over stdio, from the request over HTTP).

use std::{
    future::Future,
    sync::{Arc, OnceLock},
};

use futures::future::BoxFuture;
use rmcp::{ErrorData, model::SubscriptionFilter};

use crate::mcp::resources::ResourceUri;
use haico_core::{people::Access, people::People, people::Principal};
use haico_store::ThreadId;

/// The thread an HTTP request is for, put into the request's extensions by the `/mcp` route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpThread(pub ThreadId);

/// Who an MCP request acts as: the person its changes record, and their access to the thread,
/// which [`crate::people::permits`] turns into what they may do (a viewer reads resources and
/// calls the tools that only read, as on REST). Put into an HTTP request's extensions by the
/// `/mcp` route; fixed for a stdio process.
#[derive(Debug, Clone)]
pub struct McpCaller {
    /// The person, when there is one.
    pub actor: Option<haico_core::workspace::Actor>,
    /// What they may do with the thread.
    pub access: Access,
    /// Over HTTP, whom to ask again, while a notification stream is open, whether they may
    /// still read the thread; `None` for a local process, trusted like the database.
    pub watch: Option<(People, Principal)>,
}

impl McpCaller {
    /// Resolves once the caller may no longer read `thread` (never for a local process).
    pub(super) fn access_lost(
        &self,
        thread: ThreadId,
    ) -> impl Future<Output = ()> + Send + 'static {
        let watch = self.watch.clone();
        async move {
            match watch {
                Some((people, principal)) => people.access_lost(principal, thread).await,
                None => std::future::pending().await,
            }
        }
    }
}

/// Closes an HTTP session by its id: how a notification stream whose caller lost access ends.
pub type SessionCloser = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// How a server learns its thread and caller.
pub(super) enum Binding {
    /// `haico mcp --thread ID`, acting as one caller.
    Fixed(ThreadId, Box<McpCaller>),
    /// HTTP: the thread of the first request, set once.
    FromRequest(OnceLock<ThreadId>),
}

/// Which thread and caller a request is for.
impl Binding {
    /// Who a request acts as. An HTTP request without a caller (not routed through `/mcp`)
    /// may only read.
    pub(super) fn caller(&self, extensions: &rmcp::model::Extensions) -> McpCaller {
        match self {
            Binding::Fixed(_, caller) => McpCaller::clone(caller),
            Binding::FromRequest(_) => extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<McpCaller>())
                .cloned()
                .unwrap_or(McpCaller {
                    actor: None,
                    access: Access::Viewer,
                    watch: None,
                }),
        }
    }

    /// The thread a request is for.
    pub(super) fn thread(
        &self,
        extensions: &rmcp::model::Extensions,
    ) -> Result<ThreadId, ErrorData> {
        match self {
            Binding::Fixed(thread, _) => Ok(thread.clone()),
            Binding::FromRequest(bound) => {
                let requested = extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<McpThread>())
                    .map(|thread| thread.0.clone())
                    .ok_or_else(|| {
                        ErrorData::invalid_request(
                            "no thread chosen: connect to /mcp/{thread_id}",
                            None,
                        )
                    })?;
                let bound = bound.get_or_init(|| requested.clone());
                if *bound == requested {
                    Ok(requested)
                } else {
                    Err(ErrorData::invalid_request(
                        format!(
                            "this session works on thread `{bound}`, not `{requested}`: start a \
                             new session at /mcp/{requested}"
                        ),
                        None,
                    ))
                }
            }
        }
    }

    /// The thread the URIs of a subscription filter name, when the handler cannot tell
    /// otherwise before the request's context is known.
    pub(super) fn thread_of_filter(&self, filter: &SubscriptionFilter) -> Option<ThreadId> {
        match self {
            Binding::Fixed(thread, _) => Some(thread.clone()),
            Binding::FromRequest(bound) => bound.get().cloned().or_else(|| {
                filter
                    .resource_subscriptions
                    .iter()
                    .flatten()
                    .find_map(|uri| ResourceUri::parse(uri))
                    .map(|uri| uri.thread)
            }),
        }
    }
}
