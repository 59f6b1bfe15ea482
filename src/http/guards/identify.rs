//! Who a request is: the middleware every guarded route runs behind, before its handler.
//!
//! **One-person mode.** With no accounts and no `HAICO_API_TOKEN`, every request acts as
//! [`Principal::Local`]: the server is its person's alone, on its own address, as it always
//! was.
//!
//! **Otherwise** a request says who it is with `Authorization: Bearer <token>` (the
//! administrator's `HAICO_API_TOKEN`, or a personal token), or with the session cookie the web
//! UI gets from `POST /api/session`. Browsers' `EventSource` cannot set headers, so the events
//! stream also takes a token as `?access_token=` ([`TokenInQuery`], which that handler names).
//!
//! **A study participant** ([`crate::studies`]) acts by its token (`hsp_…`) or by the cookie
//! its entry set ([`PARTICIPANT_COOKIE`]), and the two reach differently:
//!
//! - `Authorization: Bearer hsp_…` is the participant on every route, in every mode, before
//!   anything else is looked at: outside its own thread it gets the participant's `404`. The
//!   header is sent on purpose, so it is taken at its word.
//! - The cookie is sent by the browser on its own, to every page of the server, for as long as
//!   the browser runs. So it counts only where a participant belongs ([`CookieReach`]):
//!   `/api/participant` and `/api/participant/…`, the entry routes `/api/s/{entry_key}/…`, and
//!   the routes of **its own** thread (`/api/threads/{its thread}` and below: REST, chat,
//!   events). Everywhere else, and with any `Authorization` header, the request is identified
//!   as if it had no such cookie: the researcher who tried their own study's link in this
//!   browser is still themselves on every other page. On its own thread's routes the cookie
//!   comes before the session cookie and one-person mode's owner, so the participant's page
//!   acts as the participant even in a browser that is also signed in, or on a one-person
//!   server. A researcher (or one-person mode's owner) who opens that one thread in such a
//!   browser is therefore its participant there — the panels of its condition, its changes
//!   attributed to the participant while its clock runs — which is what trying one's own link
//!   is for; every other thread, study and page stays theirs.
//!
//!   The cookie never widens anyone's access: where it counts it makes the request the
//!   participant, whose reach is its own thread within its condition; where it does not, it
//!   changes nothing. In accounts mode a participant's browser that goes elsewhere is then
//!   anonymous (`401`). In one-person mode an anonymous request is the server's owner, so a
//!   participant's browser could reach everything by going elsewhere — as any browser that can
//!   reach a one-person server always could: that mode has no authentication at all, and a
//!   study with outside participants needs accounts (or `HAICO_API_TOKEN`). The participant's
//!   page itself calls only the routes above.
//!
//! **Before all that**, in every mode, the cross-site policy ([`super::origin`]) refuses a
//! request addressed to a name the server does not answer to, one from another site's page,
//! and a write whose body is not declared JSON; a write authenticated by the cookie must also
//! carry the `Origin` of a page allowed to use the server, so another page cannot make a
//! signed-in browser change anything.
//!
//! The middleware decides nothing about the route: it puts the [`Caller`] (or why it could not
//! be identified) into the request, and the handler's `Authorized<…>` extractor applies the
//! access rule ([`super::authorized`]).

use std::sync::{Arc, Mutex};

use axum::{
    extract::{FromRequestParts, Query, Request, State},
    http::{HeaderMap, HeaderValue, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::json;

use super::origin::is_safe;
use crate::{
    http::error::ApiError, http::state::AppState, studies::PARTICIPANT_COOKIE,
    studies::PARTICIPANT_TOKEN_PREFIX,
};
use haico_core::{people::Participant, people::Principal, people::Refusal};

/// The name of the web UI's session cookie.
pub const SESSION_COOKIE: &str = "haico_session";
/// The query parameter carrying a token on the events stream (see [`TokenInQuery`]).
pub const ACCESS_TOKEN_PARAM: &str = "access_token";

/// How a request said who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// It did not have to (one-person mode) or did not.
    Nothing,
    /// A bearer token (header, or `?access_token=` on the events stream).
    Token,
    /// The session cookie.
    Cookie,
}

/// Who the request is, as the middleware found it: put into every guarded request's
/// extensions, read by the `Authorized<…>` extractors.
#[derive(Debug, Clone)]
pub(in crate::http) enum Caller {
    /// The request acts as this principal ([`Principal::Anonymous`] when it said nothing).
    Known(Principal),
    /// It sent credentials that do not identify anyone (a malformed header, a wrong token) or
    /// the accounts could not be read: the refusal, answered by any route that needs someone.
    /// Routes open to anyone treat the request as anonymous.
    Unknown(Arc<Mutex<Option<Response>>>),
}

impl Caller {
    /// The principal, or the refusal of a request that needs one.
    pub(in crate::http) fn principal(&self) -> Result<Principal, Box<Response>> {
        match self {
            Caller::Known(principal) => Ok(principal.clone()),
            Caller::Unknown(refusal) => Err(Box::new(
                refusal
                    .lock()
                    .ok()
                    .and_then(|mut refusal| refusal.take())
                    .unwrap_or_else(|| unauthorized(&Refusal::SignIn.to_string(), None)),
            )),
        }
    }

    /// The principal of a request open to anyone: the one found, else nobody.
    pub(in crate::http) fn anyone(&self) -> Principal {
        match self {
            Caller::Known(principal) => principal.clone(),
            Caller::Unknown(_) => Principal::Anonymous,
        }
    }

    /// The caller of a request the middleware let through, or of one served outside it (the
    /// health route's other methods), screened here as the middleware would.
    pub(in crate::http) async fn resolve(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Response> {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let caller = screen(state, parts).await?;
        parts.extensions.insert(caller.clone());
        Ok(caller)
    }

    /// The caller of `parts`, once [`Caller::resolve`] or the middleware found it.
    pub(in crate::http) fn of(parts: &Parts) -> Self {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or(Caller::Known(Principal::Anonymous))
    }

    fn unknown(refusal: Response) -> Self {
        Caller::Unknown(Arc::new(Mutex::new(Some(refusal))))
    }
}

/// The middleware: checks where the request comes from, finds the caller and hands the request
/// on with its [`Caller`] in the extensions.
pub(in crate::http) async fn guard(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    match screen(&state, &parts).await {
        Ok(caller) => {
            parts.extensions.insert(caller);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(refusal) => refusal,
    }
}

/// Where the request comes from and who it is: the refusal of a request from a place it may
/// not come from, else its caller.
async fn screen(state: &AppState, parts: &Parts) -> Result<Caller, Response> {
    // Where the request comes from, before anything else is looked at (no database work for
    // a refused request).
    let origin = state
        .guards()
        .origins
        .check(parts)
        .map_err(IntoResponse::into_response)?;
    match identify(state, &parts.headers, parts.uri.path()).await {
        Ok((principal, via)) => {
            // The browser adds the cookie by itself, so a change it signs must also show the
            // page it comes from (one from another site was refused above).
            if via == Via::Cookie && !is_safe(&parts.method) && !origin.vouches() {
                return Err(ApiError::Forbidden(
                    "a signed-in change must come from this server's own page: the request has \
                     no Origin header"
                        .to_string(),
                )
                .into_response());
            }
            Ok(Caller::Known(principal))
        }
        Err(refusal) => Ok(Caller::unknown(refusal)),
    }
}

/// Who the request to `path` is: a participant by its token (anywhere) or by its cookie (where
/// the cookie reaches), else the holder of the bearer token when it sent one, else the session
/// of its cookie.
async fn identify(
    state: &AppState,
    headers: &HeaderMap,
    path: &str,
) -> Result<(Principal, Via), Response> {
    // A study participant's token is looked at first: even in one-person mode, a participant
    // must never act as the server's own person.
    if let Some(value) = headers.get(header::AUTHORIZATION)
        && let Some(token) = bearer(value)
        && token.starts_with(PARTICIPANT_TOKEN_PREFIX)
    {
        return by_token(state, token).await.map(|who| (who, Via::Token));
    }
    // Its cookie only where a participant belongs (the module's documentation).
    if !headers.contains_key(header::AUTHORIZATION)
        && let Some(reach) = CookieReach::of(path)
        && let Some(token) = cookie_value(headers, PARTICIPANT_COOKIE)
        && let Ok(Some(participant)) = state.studies().participant(&token).await
        && reach.admits(&participant)
    {
        return Ok((Principal::Participant(Box::new(participant)), Via::Cookie));
    }
    let people = state.people();
    let accounts = people
        .accounts_exist()
        .await
        .map_err(|err| ApiError::from(err).into_response())?;
    if !accounts && state.admin_token().is_none() {
        return Ok((Principal::Local, Via::Nothing));
    }
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let Some(token) = bearer(value) else {
            return Err(unauthorized(
                "the `Authorization` header must be `Bearer <token>`",
                Some("invalid_request"),
            ));
        };
        return by_token(state, token).await.map(|who| (who, Via::Token));
    }
    if let Some(key) = session_key(headers) {
        return match people.session_user(&key).await {
            Ok(Some(user)) => Ok((Principal::User(user), Via::Cookie)),
            // An expired or signed-out session: nobody (the routes that need someone say so).
            Ok(None) => Ok((Principal::Anonymous, Via::Nothing)),
            Err(err) => Err(ApiError::from(err).into_response()),
        };
    }
    Ok((Principal::Anonymous, Via::Nothing))
}

/// Where the participant cookie may identify a request (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CookieReach<'a> {
    /// `/api/participant`, `/api/participant/…` and `/api/s/…`: any participant's.
    Participant,
    /// `/api/threads/{id}` and below: only the participant of thread `id`.
    Thread(&'a str),
}

impl<'a> CookieReach<'a> {
    /// Where a request to `path` stands; `None` where the cookie does not count.
    fn of(path: &'a str) -> Option<Self> {
        if path == "/api/participant"
            || path.starts_with("/api/participant/")
            || path.starts_with("/api/s/")
        {
            return Some(CookieReach::Participant);
        }
        let id = path.strip_prefix("/api/threads/")?.split('/').next()?;
        (!id.is_empty()).then_some(CookieReach::Thread(id))
    }

    /// Whether the cookie's `participant` is the request's caller here. A path's thread is
    /// compared as sent: an id written another way (percent-encoded) is not its thread, so
    /// the request is simply not the participant's.
    fn admits(self, participant: &Participant) -> bool {
        match self {
            CookieReach::Participant => true,
            CookieReach::Thread(id) => participant
                .thread
                .as_ref()
                .is_some_and(|thread| thread.as_str() == id),
        }
    }
}

/// The holder of `token`: the administrator, or the person whose personal token it is.
async fn by_token(state: &AppState, token: &str) -> Result<Principal, Response> {
    if token.starts_with(PARTICIPANT_TOKEN_PREFIX) {
        return match state.studies().participant(token).await {
            Ok(Some(participant)) => Ok(Principal::Participant(Box::new(participant))),
            Ok(None) => Err(unauthorized(
                "the participant token is not valid: open the study's link again",
                Some("invalid_token"),
            )),
            Err(err) => Err(crate::http::error::StudyFailure(err).into_response()),
        };
    }
    if state
        .admin_token()
        .is_some_and(|admin| admin.matches(token))
    {
        return Ok(Principal::AdminToken);
    }
    match state.people().user_by_token(token).await {
        Ok(Some(user)) => Ok(Principal::User(user)),
        Ok(None) => Err(unauthorized(
            "the token is not valid: send a personal token (an administrator can make a new one \
             with `haico user reset-token NAME`) or the server's HAICO_API_TOKEN",
            Some("invalid_token"),
        )),
        Err(err) => Err(ApiError::from(err).into_response()),
    }
}

/// Takes a token from `?access_token=` when the request sent no `Authorization` header: named
/// (before `Authorized<…>`) by the one handler browsers' `EventSource` calls, which cannot set
/// headers. A token there counts before the session cookie, as a header's would.
#[derive(Debug, Clone, Copy)]
pub struct TokenInQuery;

impl FromRequestParts<AppState> for TokenInQuery {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if parts.headers.contains_key(header::AUTHORIZATION) {
            return Ok(TokenInQuery);
        }
        let Some(token) = query_token(&parts.uri) else {
            return Ok(TokenInQuery);
        };
        // In one-person mode nobody needs a token, and a stale one changes nothing.
        if matches!(Caller::of(parts), Caller::Known(Principal::Local)) {
            return Ok(TokenInQuery);
        }
        let caller = match by_token(state, &token).await {
            Ok(principal) => Caller::Known(principal),
            Err(refusal) => Caller::unknown(refusal),
        };
        parts.extensions.insert(caller);
        Ok(TokenInQuery)
    }
}

/// The session key of the request's cookie, if it has one.
pub(in crate::http) fn session_key(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
}

/// The value of the request's cookie `name`, if it has one.
fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name && !c.value().is_empty())
        .map(|c| c.value().to_string())
}

/// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive).
pub(in crate::http) fn bearer(value: &HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The `access_token` query parameter, decoded.
fn query_token(uri: &axum::http::Uri) -> Option<String> {
    let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(uri).ok()?;
    pairs
        .into_iter()
        .find(|(key, _)| key == ACCESS_TOKEN_PARAM)
        .map(|(_, value)| value)
}

/// `401` with `WWW-Authenticate: Bearer` (RFC 6750) and the API's error body.
pub(in crate::http) fn unauthorized(message: &str, error: Option<&str>) -> Response {
    let challenge = match error {
        Some(code) => format!("Bearer realm=\"haico\", error=\"{code}\""),
        None => "Bearer realm=\"haico\"".to_string(),
    };
    let mut response = (
        axum::http::StatusCode::UNAUTHORIZED,
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
    fn bearer_headers_are_parsed() {
        let parse = |raw: &'static str| bearer(&HeaderValue::from_static(raw)).map(str::to_string);
        assert_eq!(parse("Bearer abc"), Some("abc".to_string()));
        assert_eq!(parse("bearer  abc "), Some("abc".to_string()));
        assert_eq!(parse("Basic abc"), None);
        assert_eq!(parse("Bearer"), None);
        assert_eq!(parse("Bearer "), None);
    }

    #[test]
    fn the_participant_cookie_reaches_only_participant_routes() {
        let reach = CookieReach::of;
        assert_eq!(reach("/api/participant"), Some(CookieReach::Participant));
        assert_eq!(
            reach("/api/participant/start"),
            Some(CookieReach::Participant)
        );
        assert_eq!(reach("/api/s/key/sessions"), Some(CookieReach::Participant));
        assert_eq!(reach("/api/threads/t1"), Some(CookieReach::Thread("t1")));
        assert_eq!(
            reach("/api/threads/t1/events"),
            Some(CookieReach::Thread("t1"))
        );
        for elsewhere in [
            "/",
            "/s/key",
            "/studies",
            "/api/participants",
            "/api/threads",
            "/api/threads/",
            "/api/studies",
            "/api/me",
            "/mcp/t1",
        ] {
            assert_eq!(reach(elsewhere), None, "{elsewhere}");
        }
    }

    #[test]
    fn the_query_token_is_read_decoded() {
        let uri = axum::http::Uri::from_static("/x?last_event_id=3&access_token=a%2Bb");
        assert_eq!(query_token(&uri), Some("a+b".to_string()));
        let uri = axum::http::Uri::from_static("/x?last_event_id=3");
        assert_eq!(query_token(&uri), None);
    }
}
