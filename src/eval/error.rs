//! Why an evaluation could not run.

use std::path::PathBuf;

use crate::agent::turn::StartError;

use haico_store::StoreError;

use haico_core::workspace::WorkspaceError;

use crate::eval::scenario::ScenarioError;

/// Why an evaluation could not run (as opposed to scenarios that ran and failed checks, which
/// is a result). Each names the scenario file.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A scenario file could not be loaded.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// `--replay` was asked for, but the scenario has no script.
    #[error("{}: has no `replay` answers, which --replay plays; add them or run it against a model", path.display())]
    NoReplay {
        /// The scenario file.
        path: PathBuf,
    },
    /// The temporary folder for the scenario's database could not be made.
    #[error("{}: cannot make a temporary folder for its database: {source}", path.display())]
    TempDir {
        /// The scenario file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The scenario's database could not be opened.
    #[error("{}: cannot open its database: {source}", path.display())]
    Database {
        /// The scenario file.
        path: PathBuf,
        /// Why.
        source: StoreError,
    },
    /// Setting up or reading the workspace failed (a starting workspace the workspace's rules
    /// refuse is reported here, naming the item).
    #[error("{}: {what}: {source}", path.display())]
    Workspace {
        /// The scenario file.
        path: PathBuf,
        /// What was being done.
        what: String,
        /// Why it failed.
        source: WorkspaceError,
    },
    /// A turn could not start.
    #[error("{}: message {turn} could not start a turn: {source}", path.display())]
    Start {
        /// The scenario file.
        path: PathBuf,
        /// Which message (from 1).
        turn: usize,
        /// Why.
        source: StartError,
    },
    /// A turn's task ended abnormally (it panicked or was aborted).
    #[error("{}: the turn of message {turn} ended abnormally: {source}", path.display())]
    TurnTask {
        /// The scenario file.
        path: PathBuf,
        /// Which message (from 1).
        turn: usize,
        /// Why.
        source: tokio::task::JoinError,
    },
}
