//! Every integration test of haico, in one binary: one link of sqlx, axum, rmcp and reqwest
//! instead of one per file, and one place where support code is shared (and where unused
//! support code is a warning, not a silent leftover).
//!
//! Modules follow the areas of `src/`. Tests that need PostgreSQL, Chromium or nginx run when
//! those are there and otherwise pass without running, after a note on stderr saying what was
//! missing and how to run them; `HAICO_TEST_REQUIRE_ALL=1` (set by `.ci/run`) makes a missing
//! part a failure instead (see `common::needs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[macro_use]
mod common;

mod agent;
mod cli;
mod deploy;
mod fuzz;
mod history;
mod http;
mod mcp;
mod mcp_client;
mod people;
mod providers;
mod replicas;
mod store;
mod studies;
mod suggestions;
mod telemetry;
mod tools;
mod web_ui;
