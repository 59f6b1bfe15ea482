//! The `haico` command line: `serve` runs the server, `tools` prints the tool list, `chat`
//! runs one turn in the terminal, `mcp` serves a thread to an MCP client over stdio, `export`
//! and `import` move threads as recordings, `user` manages accounts, `eval` measures the agent
//! on scenario files.

use clap::{Parser, Subcommand};

use crate::{
    config::{ChatArgs, ExportArgs, ImportArgs, McpArgs, ServeArgs, UserArgs},
    eval::cli::EvalArgs,
};

/// haico: a shared workspace where a person and an LLM agent co-construct a solution.
#[derive(Debug, Parser)]
// The version names the commit too (`build.rs`), so a bug report says which build it saw.
#[command(
    name = "haico",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("HAICO_COMMIT"), ")"),
    about
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (REST API and tools endpoint).
    Serve(Box<ServeArgs>),
    /// Print the LLM-facing tool list (names, descriptions, JSON Schemas) as JSON.
    Tools,
    /// Run one agent turn on a thread in the terminal: prints each step and the streamed answer.
    Chat(Box<ChatArgs>),
    /// Serve one thread to an MCP client over stdio (JSON-RPC on stdin/stdout, logs on stderr).
    Mcp(Box<McpArgs>),
    /// Write threads as recordings (JSON Lines, `haico-recording/1`): one thread to standard
    /// output, or every thread to a folder.
    Export(Box<ExportArgs>),
    /// Load a recording as a new thread; a recording that is not valid is refused whole.
    Import(Box<ImportArgs>),
    /// Manage accounts: `add NAME [--admin] [--password-stdin]`, `list`, `remove NAME`,
    /// `reset-token NAME`.
    User(Box<UserArgs>),
    /// Evaluate the agent: run scenario files (a starting workspace, the person's messages,
    /// checks) against the configured model, or their own scripts with `--replay`, once or
    /// `--repeat` times, and report task checks and guards beside a do-nothing baseline, with
    /// measures, as Markdown (and JSON, with a per-call trace; `--traces` writes it per run).
    /// Exits 1 when a scenario fails, 2 when the evaluation cannot run.
    Eval(Box<EvalArgs>),
}
