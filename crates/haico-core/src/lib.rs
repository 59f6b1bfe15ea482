//! haico's domain: what a thread's workspace is and how it may change, who may do what, and
//! the shapes clients read. It stands on the store and knows nothing of HTTP, MCP or models.
//!
//! - [`workspace`]: every rule of a thread's workspace and the one path by which a change is
//!   committed and announced;
//! - [`people`]: accounts, sign-in, and who may see or change which thread;
//! - [`events`]: live delivery of the event log;
//! - [`charts`]: what a chart is and how it is drawn;
//! - [`markdown`]: Markdown made safe to show;
//! - [`wire`]: the published shapes, made from the store's rows by `From`, so a stored column
//!   never is an API field by accident.

pub mod charts;
pub mod events;
pub mod markdown;
pub mod people;
pub mod wire;
pub mod workspace;

/// The store's words every layer above it shares: a thread's id, the panels, token usage.
pub use haico_store::{InvalidThreadId, ThreadId, panels, usage};
