//! The exporter's HTTP client: haico's own `reqwest` (rustls on `ring`, the system's trust
//! store), driven on the tokio runtime by the export task. The exporter's built-in clients
//! would bring a blocking client with a runtime of its own, or a second TLS stack.

use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// Longest wait for a connection to the collector: an endpoint that does not answer within it
/// is treated as down (the spans of that batch are dropped and counted).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Largest answer read from a collector; OTLP answers are a few bytes.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// A `reqwest` client that speaks [`HttpClient`].
#[derive(Debug, Clone)]
pub struct ExportClient {
    client: reqwest::Client,
}

impl ExportClient {
    /// A client whose every request ends within `timeout`.
    pub fn new(timeout: Duration) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .timeout(timeout)
            .user_agent(concat!("haico/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let answer = self
            .client
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let status = answer.status();
        let headers = answer.headers().clone();
        let mut body = answer.bytes().await?;
        if body.len() > MAX_ANSWER_BYTES {
            body.truncate(MAX_ANSWER_BYTES);
        }
        let mut response = Response::builder().status(status).body(body)?;
        *response.headers_mut() = headers;
        Ok(response)
    }
}
