//! History: revisions of every change, the history API, the migration that gave old
//! workspaces a baseline, and undoing agent turns.

mod api;
mod compaction;
mod migration;
mod revisions;
mod turns;
