//! The MCP server: haico's workspace for any Model Context Protocol client (desktop
//! assistants, IDE agents, the official SDKs), built on the `rmcp` crate.
//!
//! An MCP session works on one thread with exactly the agent's tools and rules:
//! - **tools** ([`tools`]): the same 16 tools, names, descriptions and input schemas as
//!   `GET /api/tools`; every call runs through [`ToolRuntime::call`](crate::tools::ToolRuntime)
//!   (one transaction, lock rules, `workspace` events with `source: "agent"`), and its result
//!   carries the envelope JSON as text and as `structuredContent`, with `isError` on failure
//!   (and, after the text, a chart the call stored as a PNG `image`);
//! - **resources** ([`resources`]): the panels as `haico://thread/{thread_id}/{panel}` and each
//!   artifact (a chart also as `…/chart.svg` and `…/chart.png`), readable and subscribable;
//! - **notifications** ([`notify`]): `notifications/resources/updated` whenever a panel
//!   changes, whoever changed it — driven by the thread's event log, so changes made by the web
//!   UI, the agent or another process show up too.
//!
//! Two transports: [`serve_stdio`] for `haico mcp --thread ID`, and streamable HTTP at
//! `/mcp/{thread_id}` on the main server (`http/mcp.rs`, part of the HTTP adapter), whose
//! sessions are stored in the database ([`sessions`]) so that any replica serves them.

mod caller;
pub mod notify;
pub mod resources;
mod server;
pub mod sessions;
pub mod tools;

pub use server::{HaicoMcp, McpCaller, McpThread, SessionCloser, supported_protocol_versions};

use anyhow::Context;
use rmcp::ServiceExt;

use crate::tools::ToolRuntime;

use haico_store::{Database, ThreadId};

use haico_core::{events::SharedBus, workspace::WorkspaceError, workspace::Workspaces};

/// The title a thread made by `haico mcp` gets.
pub const NEW_THREAD_TITLE: &str = "MCP session";

/// Creates the thread unless it exists. Whoever creates it first wins; a concurrent creation
/// by someone else is not an error.
pub async fn ensure_thread(
    workspaces: &Workspaces,
    thread: &ThreadId,
) -> Result<(), WorkspaceError> {
    if workspaces
        .threads()
        .ensure(thread, NEW_THREAD_TITLE)
        .await?
    {
        tracing::info!(thread = %thread, "created the thread");
    }
    Ok(())
}

/// Serves MCP over stdin/stdout for one thread until the client closes stdin. Only JSON-RPC
/// goes to stdout; logs go to stderr.
///
/// The process acts as the account `as_name`, or else as the thread's owner (if it has one):
/// its changes record that name and a thread it creates belongs to it. A local process that
/// opens the database is trusted like the database itself, so it may change the thread.
pub async fn serve_stdio(
    db: Database,
    bus: SharedBus,
    thread: ThreadId,
    as_name: Option<&str>,
) -> anyhow::Result<()> {
    let runtime = ToolRuntime::with_bus(db.clone(), bus);
    let people = haico_core::people::People::new(db);
    let named = match as_name {
        Some(name) => Some(
            people
                .user_named(name)
                .await
                .context("looking up --as")?
                .with_context(|| {
                    format!("--as {name}: no account has that name (see `haico user list`)")
                })?,
        ),
        None => None,
    };
    let actor = |user: &haico_store::User| haico_core::workspace::Actor {
        id: user.id,
        name: user.name.clone(),
    };
    let runtime = runtime.acting_as(named.as_ref().map(actor));
    ensure_thread(runtime.workspaces(), &thread)
        .await
        .with_context(|| format!("creating thread `{thread}`"))?;
    let actor = match named {
        Some(user) => Some(actor(&user)),
        None => people
            .owner_of(&thread)
            .await
            .context("reading the thread's owner")?
            .as_ref()
            .map(actor),
    };
    let caller = McpCaller {
        actor: actor.clone(),
        access: haico_core::people::Access::Owner,
        watch: None,
    };
    let server = HaicoMcp::for_thread(runtime.acting_as(actor), thread.clone(), caller);
    tracing::info!(thread = %thread, "serving MCP on stdio");
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .context("starting the MCP session on stdio")?;
    let reason = running.waiting().await.context("running the MCP session")?;
    tracing::info!(?reason, "MCP session ended");
    Ok(())
}
