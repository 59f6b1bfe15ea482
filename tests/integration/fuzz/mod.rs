//! Property tests that throw generated input at the tools, the REST API and raw HTTP.

mod http_raw;
mod rest;
mod tools;
