//! The HTTP side shared by the streaming providers: one `reqwest` client per provider, a
//! per-attempt timeout covering connection and first event, an idle timeout between chunks,
//! and retries with exponential back-off and jitter for transient failures (connection
//! errors, timeouts, 429 honouring `Retry-After`, 408 and 5xx).
//!
//! Retries happen only before the answer has started: an attempt counts as started once its
//! first SSE event has arrived. From then on a failure is an error item of the stream, because
//! text the user already saw cannot be taken back.

use std::{error::Error as StdError, time::Duration};

use futures::{Stream, StreamExt, stream::BoxStream};
use reqwest::{RequestBuilder, Response, header::HeaderMap};
use sse_stream::{Sse, SseByteStream};

use crate::agent::model::ProviderError;

/// The longest `Retry-After` haico waits for; a provider asking for more gets a
/// [`ProviderError::RateLimited`] at once, which the user can act on.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// The longest wait for a connection to the model's server: one that takes longer is not
/// coming (a dropped packet is resent within a few seconds), whatever HAICO_LLM_TIMEOUT_SECS
/// allows the model for its first byte.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest back-off between two attempts, jitter aside.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// How many characters of an error body are kept in messages.
const BODY_EXCERPT_CHARS: usize = 500;

/// How patient and how persistent the transport is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpPolicy {
    /// Budget of one attempt: connect, send, response head and first event.
    pub timeout: Duration,
    /// Longest silence between two chunks once the answer streams.
    pub idle_timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First back-off; it doubles with each retry, up to a few seconds.
    pub backoff: Duration,
}

/// Raw SSE events of one answer, the first one already received.
pub type SseEvents = BoxStream<'static, Result<Sse, ProviderError>>;

/// A provider's HTTP client and its policy.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    policy: HttpPolicy,
    provider: &'static str,
}

impl HttpTransport {
    /// Builds the client; `provider` names it in logs.
    pub fn new(provider: &'static str, policy: HttpPolicy) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(policy.timeout.min(MAX_CONNECT_TIMEOUT))
            .user_agent(concat!("haico/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ProviderError::InvalidConfig(format!("HTTP client: {}", chain(&e))))?;
        Ok(Self {
            client,
            policy,
            provider,
        })
    }

    /// The client, to build requests with.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends the request built by `build` (called once per attempt) and returns its SSE events
    /// once the first has arrived, retrying transient failures before that point.
    pub async fn open_events(
        &self,
        url: &str,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<SseEvents, ProviderError> {
        // The model's server joins the caller's trace (when traces are exported): its spans, if
        // it makes any, become children of this call's.
        let mut trace = HeaderMap::new();
        crate::telemetry::propagation::inject_headers(&mut trace);
        let mut attempt = 0;
        loop {
            let request = if trace.is_empty() {
                build()
            } else {
                build().headers(trace.clone())
            };
            let error = match self.attempt(url, request).await {
                Ok(events) => return Ok(events),
                Err(error) => error,
            };
            let too_long = matches!(
                error,
                ProviderError::RateLimited { retry_after: Some(wait), .. } if wait > MAX_RETRY_AFTER
            );
            // A refused port gets one quick retry (a server restarting), not the full series.
            let refused = matches!(error, ProviderError::Unreachable { refused: true, .. });
            let retries = if refused {
                self.policy.max_retries.min(1)
            } else {
                self.policy.max_retries
            };
            if too_long || !error.is_transient() || attempt >= retries {
                return Err(error);
            }
            let delay = match error {
                ProviderError::RateLimited {
                    retry_after: Some(wait),
                    ..
                } => wait,
                _ => backoff(self.policy.backoff, attempt),
            };
            attempt += 1;
            tracing::warn!(
                provider = self.provider,
                attempt,
                max_retries = self.policy.max_retries,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %error,
                "LLM request failed; retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// One attempt: the response head, its status, and the first SSE event, within the timeout.
    async fn attempt(
        &self,
        url: &str,
        request: RequestBuilder,
    ) -> Result<SseEvents, ProviderError> {
        let timeout = self.policy.timeout;
        let first = async {
            let response = request
                .send()
                .await
                .map_err(|e| send_error(url, timeout, &e))?;
            let response = check_event_stream(check_status(response).await?).await?;
            let mut events = SseByteStream::new(response.bytes_stream()).boxed();
            match events.next().await {
                Some(Ok(event)) => Ok((event, events)),
                Some(Err(e)) => Err(ProviderError::StreamCut(format!(
                    "before the first event: {}",
                    chain(&e)
                ))),
                None => Err(ProviderError::StreamCut(
                    "the response ended before its first event".into(),
                )),
            }
        };
        let (event, rest) =
            tokio::time::timeout(timeout, first)
                .await
                .map_err(|_| ProviderError::Timeout {
                    after: timeout,
                    waiting_for: "the first byte of the answer",
                })??;
        let rest = with_idle_timeout(rest, self.policy.idle_timeout);
        Ok(futures::stream::once(async move { Ok(event) })
            .chain(rest)
            .boxed())
    }
}

/// Maps the raw event stream's items to ours and ends it with a `Timeout` error when the
/// provider goes quiet for longer than `idle`.
fn with_idle_timeout(
    events: BoxStream<'static, Result<Sse, sse_stream::Error>>,
    idle: Duration,
) -> impl Stream<Item = Result<Sse, ProviderError>> {
    futures::stream::unfold(Some(events), move |state| async move {
        let mut events = state?;
        match tokio::time::timeout(idle, events.next()).await {
            Ok(Some(Ok(event))) => Some((Ok(event), Some(events))),
            Ok(Some(Err(e))) => Some((Err(ProviderError::StreamCut(chain(&e))), None)),
            Ok(None) => None,
            Err(_) => Some((
                Err(ProviderError::Timeout {
                    after: idle,
                    waiting_for: "the next chunk of the answer",
                }),
                None,
            )),
        }
    })
}

/// Turns a non-success response into the matching error, reading an excerpt of its body.
async fn check_status(response: Response) -> Result<Response, ProviderError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers());
    let body = response
        .text()
        .await
        .map(|text| excerpt(&text))
        .unwrap_or_else(|e| format!("(body unreadable: {})", chain(&e)));
    if status.as_u16() == 429 {
        return Err(ProviderError::RateLimited { retry_after, body });
    }
    Err(ProviderError::Status {
        code: status.as_u16(),
        body,
    })
}

/// Rejects a success that is not an event stream (a server ignoring `stream: true`, a proxy's
/// HTML page); a missing content type is given the benefit of the doubt.
async fn check_event_stream(response: Response) -> Result<Response, ProviderError> {
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_ascii_lowercase);
    match content_type {
        Some(kind) if !kind.contains("event-stream") => {
            let body = response
                .text()
                .await
                .map(|text| excerpt(&text))
                .unwrap_or_default();
            Err(ProviderError::Protocol(format!(
                "expected an event stream, got `{kind}`: {body}"
            )))
        }
        _ => Ok(response),
    }
}

/// The wait a 429 asks for: `retry-after-ms` (OpenAI) or `Retry-After` in seconds. An HTTP
/// date is not honoured; the normal back-off applies then.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(|secs| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// Exponential back-off with "equal jitter": half the delay fixed, half random.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let full = base
        .saturating_mul(2u32.saturating_pow(attempt))
        .min(MAX_BACKOFF.max(base));
    let half = full / 2;
    half + half.mul_f64(fastrand::f64())
}

/// Classifies a failure of `send()`.
fn send_error(url: &str, timeout: Duration, error: &reqwest::Error) -> ProviderError {
    if error.is_timeout() {
        // Only connecting has a time-out of its own: the server is not reachable.
        ProviderError::Unreachable {
            url: url.to_string(),
            reason: format!(
                "no connection within {} s",
                timeout.min(MAX_CONNECT_TIMEOUT).as_secs()
            ),
            refused: false,
        }
    } else if error.is_builder() {
        ProviderError::Request(chain(error))
    } else {
        ProviderError::Unreachable {
            url: url.to_string(),
            reason: chain(error),
            refused: is_refused(error),
        }
    }
}

/// Whether the connection was refused: nothing listens at the address.
fn is_refused(error: &reqwest::Error) -> bool {
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// An error and its sources on one line (reqwest's own message alone is terse).
pub fn chain(error: &dyn StdError) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// At most [`BODY_EXCERPT_CHARS`] characters of `text`, trimmed, marked when cut.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), None);
    }

    #[test]
    fn backoff_grows_and_stays_capped() {
        let base = Duration::from_millis(100);
        for attempt in 0..20 {
            let delay = backoff(base, attempt);
            let full = base
                .saturating_mul(2u32.saturating_pow(attempt))
                .min(MAX_BACKOFF);
            assert!(delay >= full / 2 && delay <= full, "{attempt}: {delay:?}");
        }
    }

    #[test]
    fn excerpts_are_cut_on_character_boundaries() {
        let long = "é".repeat(BODY_EXCERPT_CHARS + 10);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), BODY_EXCERPT_CHARS + 1);
        assert_eq!(excerpt("  short  "), "short");
    }
}
