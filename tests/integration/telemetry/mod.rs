//! Traces as an observability tool receives them: haico exporting over OTLP to a real receiver
//! that decodes with the official protobuf definitions. Each test installs the process's
//! tracing subscriber, so each runs in a process of its own (`common::isolated`).

mod receiver;
mod serve;
mod traces;
