//! Who an MCP request is for and acts as: [`McpThread`] and [`McpCaller`], put into an HTTP
//! request by the `/mcp/{thread_id}` route (fixed for a stdio process), and how a session whose
//! caller lost access is closed ([`SessionCloser`]).

use std::{future::Future, sync::Arc};

use futures::future::BoxFuture;

use crate::{
    ThreadId,
    people::{Access, People, Principal},
};

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
    pub actor: Option<crate::workspace::Actor>,
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
