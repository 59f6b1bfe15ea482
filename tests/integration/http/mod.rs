//! The HTTP server: the REST API, auth, concurrency, connections, cross-site rules, event
//! streams, metrics, OpenAPI, the UI's assets and Markdown rendering bounds.

mod api;
mod auth;
mod concurrency;
mod connections;
mod cross_site;
mod events;
mod markdown_bounds;
mod metrics;
mod openapi;
mod ui;
mod workspace;
