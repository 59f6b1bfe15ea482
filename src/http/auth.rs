//! The optional bearer token (`HAICO_API_TOKEN`, `--api-token`).
//!
//! When a token is configured, every route but `GET /healthz` (which load balancers and
//! orchestrators probe without credentials) and the web UI's shell requires
//! `Authorization: Bearer <token>`; a missing or wrong one is answered `401` with
//! `WWW-Authenticate: Bearer` and an `{"error"}` body. That includes `/metrics`: Prometheus
//! sends the token with `authorization: {credentials: …}` (or `bearer_token_file`) in its
//! scrape config. Unknown paths answer `401` too, so the route table is not open to probing.
//!
//! The shell — `GET /`, `GET /t/{thread_id}` and `GET /assets/{*path}` ([`super::ui::ROUTES`])
//! — loads without a token, because a browser cannot send one before the page has asked for
//! it. It holds only the static files every copy of haico ships; everything the page then
//! reads or writes goes through `/api`, which stays protected (including `GET /api/info`).
//!
//! Browsers' `EventSource` cannot set headers, so `GET /api/threads/{thread_id}/events` also
//! accepts the token as `?access_token=<token>` (percent-encoded). Only there: a query string
//! ends up in access logs and browser history more easily than a header, so every other route
//! insists on the header.
//!
//! Only the SHA-256 digest of the token is kept, and a presented token is compared by digest in
//! constant time, so neither the comparison's timing nor its length reveals the token.

use std::{fmt, str::FromStr, sync::Arc};

use axum::{
    extract::{MatchedPath, Query, Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The route that answers without a token.
pub(super) const OPEN_ROUTE: &str = "/healthz";
/// The one route that also takes the token as `?access_token=`.
pub(super) const EVENTS_ROUTE: &str = "/api/threads/{thread_id}/events";
/// The query parameter carrying the token on [`EVENTS_ROUTE`].
pub const ACCESS_TOKEN_PARAM: &str = "access_token";

/// The API token the server requires. Holds only the token's SHA-256 digest, and prints as
/// `ApiToken(<redacted>)`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken {
    digest: [u8; 32],
}

/// Why a configured token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidApiToken {
    /// The token is empty.
    #[error("the API token is empty: unset HAICO_API_TOKEN to run without one")]
    Empty,
    /// The token holds a character an `Authorization` header cannot carry as is.
    #[error(
        "the API token may only hold visible ASCII characters (no spaces or control characters)"
    )]
    InvalidCharacter,
}

impl ApiToken {
    /// Accepts a token of visible ASCII characters (`!` to `~`), so it can be sent in a header.
    pub fn new(token: &str) -> Result<Self, InvalidApiToken> {
        if token.is_empty() {
            return Err(InvalidApiToken::Empty);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidApiToken::InvalidCharacter);
        }
        Ok(Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// Whether `presented` is the token, compared in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        digest.ct_eq(&self.digest).into()
    }
}

impl FromStr for ApiToken {
    type Err = InvalidApiToken;

    fn from_str(token: &str) -> Result<Self, Self::Err> {
        Self::new(token)
    }
}

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(<redacted>)")
    }
}

/// The middleware: lets a request through when it carries the token (or needs none).
pub(super) async fn require_token(
    State(token): State<Arc<ApiToken>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    if route == Some(OPEN_ROUTE) || is_ui_shell(request.method(), route) {
        return next.run(request).await;
    }
    let presented = match request.headers().get(header::AUTHORIZATION) {
        Some(value) => match bearer(value) {
            Some(presented) => Some(presented.to_string()),
            None => {
                return unauthorized(
                    "the `Authorization` header must be `Bearer <token>`",
                    Some("invalid_request"),
                );
            }
        },
        None if request.method() == Method::GET && route == Some(EVENTS_ROUTE) => {
            query_token(&request)
        }
        None => None,
    };
    match presented {
        Some(presented) if token.matches(&presented) => next.run(request).await,
        Some(_) => unauthorized("the API token is not valid", Some("invalid_token")),
        None => unauthorized(
            "this server requires an API token: send `Authorization: Bearer <token>` (the \
             server's HAICO_API_TOKEN)",
            None,
        ),
    }
}

/// A `GET` (or `HEAD`) of the web UI's static shell, which loads without a token.
fn is_ui_shell(method: &Method, route: Option<&str>) -> bool {
    (*method == Method::GET || *method == Method::HEAD)
        && route.is_some_and(|route| super::ui::ROUTES.contains(&route))
}

/// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive).
fn bearer(value: &HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The `access_token` query parameter, decoded.
fn query_token(request: &Request) -> Option<String> {
    let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(request.uri()).ok()?;
    pairs
        .into_iter()
        .find(|(key, _)| key == ACCESS_TOKEN_PARAM)
        .map(|(_, value)| value)
}

/// `401` with `WWW-Authenticate: Bearer` (RFC 6750) and the API's error body.
fn unauthorized(message: &str, error: Option<&str>) -> Response {
    let challenge = match error {
        Some(code) => format!("Bearer realm=\"haico\", error=\"{code}\""),
        None => "Bearer realm=\"haico\"".to_string(),
    };
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({ "error": message })),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_themselves() {
        let token = ApiToken::new("s3cret-token").unwrap_or_else(|_| unreachable!());
        assert!(token.matches("s3cret-token"));
        assert!(!token.matches("s3cret-toke"));
        assert!(!token.matches("s3cret-token2"));
        assert!(!token.matches(""));
        assert_eq!(format!("{token:?}"), "ApiToken(<redacted>)");
    }

    #[test]
    fn unusable_tokens_are_refused() {
        assert_eq!(ApiToken::new(""), Err(InvalidApiToken::Empty));
        assert_eq!(
            ApiToken::new("two words"),
            Err(InvalidApiToken::InvalidCharacter)
        );
        assert_eq!(
            ApiToken::new("tab\t"),
            Err(InvalidApiToken::InvalidCharacter)
        );
    }

    #[test]
    fn bearer_headers_are_parsed() {
        let parse = |raw: &'static str| bearer(&HeaderValue::from_static(raw)).map(str::to_string);
        assert_eq!(parse("Bearer abc"), Some("abc".to_string()));
        assert_eq!(parse("bearer  abc "), Some("abc".to_string()));
        assert_eq!(parse("Basic abc"), None);
        assert_eq!(parse("Bearer"), None);
        assert_eq!(parse("Bearer "), None);
    }
}
