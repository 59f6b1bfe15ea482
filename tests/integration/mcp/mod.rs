//! The MCP adapter over stdio and streamable HTTP, across processes and replicas.

mod cross_process;
mod http;
mod replicas;
mod stdio;
