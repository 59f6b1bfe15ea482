//! The `haico` command line: `serve` runs the server, `tools` prints the tool list.

use clap::{Parser, Subcommand};

use crate::config::ServeArgs;

/// haico: a shared workspace where a person and an LLM agent co-construct a solution.
#[derive(Debug, Parser)]
#[command(name = "haico", version, about)]
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
}
