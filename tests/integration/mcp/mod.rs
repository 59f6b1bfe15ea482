//! The MCP adapter over stdio and streamable HTTP, across processes and replicas, and as the
//! official Python SDK's client sees it.

mod cross_process;
mod http;
mod python_sdk;
mod replicas;
mod stdio;
