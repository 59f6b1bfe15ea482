//! Who a request is, and whether they may do what it asks: one rule per route.
//!
//! **One-person mode.** With no accounts and no `HAICO_API_TOKEN`, every request acts as
//! [`Principal::Local`] and every rule lets it through: the server is its person's alone, on
//! its own address, as it always was.
//!
//! **Otherwise** a request says who it is with `Authorization: Bearer <token>` (the
//! administrator's `HAICO_API_TOKEN`, or a personal token), or with the session cookie the web
//! UI gets from `POST /api/session`. Browsers' `EventSource` cannot set headers, so the events
//! stream also takes a token as `?access_token=` (and sends the cookie on its own).
//!
//! **Before all that**, in every mode, the cross-site policy ([`super::origin`]) refuses a
//! request addressed to a name the server does not answer to, one from another site's page,
//! and a write whose body is not declared JSON; a write authenticated by the cookie must also
//! carry the `Origin` of a page allowed to use the server, so another page cannot make a
//! signed-in browser change anything. Chat turns and sign-ins are counted against their rate
//! limits ([`super::limits`]) here too.
//!
//! **Rules.** [`RULES`] gives every route of the router a [`Rule`]; `tests/integration/people/access.rs`
//! walks every route as owner, editor, viewer, outsider and anonymous, and fails on a route
//! without a rule (which this middleware refuses, rather than guess). For a thread route, a
//! caller without access gets the same `404` as for a thread that does not exist; one with
//! too little access gets `403` saying what they may do.

use axum::{
    extract::{FromRequestParts, MatchedPath, Query, RawPathParams, Request, State},
    http::{HeaderMap, HeaderValue, Method, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde_json::json;

use super::{ApiError, origin::is_safe, state::AppState};
use crate::{
    ThreadId,
    people::{Access, Principal},
};

/// The name of the web UI's session cookie.
pub const SESSION_COOKIE: &str = "haico_session";
/// The query parameter carrying a token on [`EVENTS_ROUTE`].
pub const ACCESS_TOKEN_PARAM: &str = "access_token";
/// The one route that also takes a token as `?access_token=`.
pub(super) const EVENTS_ROUTE: &str = "/api/threads/{thread_id}/events";
/// The route that starts an agent turn (rate-limited per caller).
const CHAT_ROUTE: &str = "/api/threads/{thread_id}/chat";
/// The route that signs in (rate-limited per address).
const SESSION_ROUTE: &str = "/api/session";

/// What a route asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Anyone, signed in or not (health checks, the web UI's static shell, signing in).
    Open,
    /// Anyone who says who they are.
    Signed,
    /// An administrator: the `HAICO_API_TOKEN` holder or an admin account.
    Admin,
    /// The thread in the path, with at least this access.
    Thread(Access),
    /// The MCP endpoint: the thread with at least viewer access (tool calls need editor,
    /// checked per call), or a thread that does not exist yet, which the endpoint creates for
    /// its caller.
    ThreadOrNew,
    /// A method the route does not serve: whoever says who they are learns `405`, from the
    /// guard itself. The handler is never reached, so a handler added without a rule of its
    /// own fails closed instead of falling under a guessed one.
    Unserved,
}

/// Every route of the router and its rule: `(method, route, rule)`. `HEAD` follows `GET`.
pub const RULES: &[(&str, &str, Rule)] = &[
    // Operations.
    ("GET", "/healthz", Rule::Open),
    ("GET", "/metrics", Rule::Admin),
    ("GET", "/api/openapi.json", Rule::Signed),
    ("GET", "/api/info", Rule::Signed),
    ("POST", "/api/markdown", Rule::Signed),
    ("GET", "/api/tools", Rule::Signed),
    // The web UI's shell: static files every copy of haico ships.
    ("GET", "/", Rule::Open),
    ("GET", "/t/{thread_id}", Rule::Open),
    ("GET", "/assets/{*path}", Rule::Open),
    // People.
    ("GET", "/api/session", Rule::Open),
    ("POST", "/api/session", Rule::Open),
    ("DELETE", "/api/session", Rule::Open),
    ("GET", "/api/me", Rule::Signed),
    ("GET", "/api/users", Rule::Admin),
    ("POST", "/api/users", Rule::Admin),
    ("DELETE", "/api/users/{name}", Rule::Admin),
    ("POST", "/api/users/{name}/token", Rule::Admin),
    (
        "GET",
        "/api/threads/{thread_id}/members",
        Rule::Thread(Access::Owner),
    ),
    (
        "PUT",
        "/api/threads/{thread_id}/members/{name}",
        Rule::Thread(Access::Owner),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/members/{name}",
        Rule::Thread(Access::Owner),
    ),
    // Threads.
    ("GET", "/api/threads", Rule::Signed),
    ("POST", "/api/threads", Rule::Signed),
    ("POST", "/api/threads/import", Rule::Signed),
    (
        "GET",
        "/api/threads/{thread_id}",
        Rule::Thread(Access::Viewer),
    ),
    (
        "PATCH",
        "/api/threads/{thread_id}",
        Rule::Thread(Access::Editor),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}",
        Rule::Thread(Access::Owner),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/workspace",
        Rule::Thread(Access::Viewer),
    ),
    // Suggestions (issue 25): viewers see them, editors decide.
    (
        "GET",
        "/api/threads/{thread_id}/suggestions",
        Rule::Thread(Access::Viewer),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept",
        Rule::Thread(Access::Editor),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
        Rule::Thread(Access::Editor),
    ),
    // The workspace, on the user path.
    (
        "GET",
        "/api/threads/{thread_id}/objective",
        Rule::Thread(Access::Viewer),
    ),
    (
        "PUT",
        "/api/threads/{thread_id}/objective",
        Rule::Thread(Access::Editor),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/document",
        Rule::Thread(Access::Viewer),
    ),
    (
        "PUT",
        "/api/threads/{thread_id}/document",
        Rule::Thread(Access::Editor),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/todos",
        Rule::Thread(Access::Viewer),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/todos",
        Rule::Thread(Access::Editor),
    ),
    (
        "PATCH",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Rule::Thread(Access::Editor),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Rule::Thread(Access::Editor),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/preferences",
        Rule::Thread(Access::Viewer),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/preferences",
        Rule::Thread(Access::Editor),
    ),
    (
        "PATCH",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Rule::Thread(Access::Editor),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Rule::Thread(Access::Editor),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts",
        Rule::Thread(Access::Viewer),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}",
        Rule::Thread(Access::Viewer),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
        Rule::Thread(Access::Viewer),
    ),
    // History.
    (
        "GET",
        "/api/threads/{thread_id}/history",
        Rule::Thread(Access::Viewer),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/document/diff",
        Rule::Thread(Access::Viewer),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/restore",
        Rule::Thread(Access::Editor),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/turns/{turn_index}/revert",
        Rule::Thread(Access::Editor),
    ),
    // A fork is a new thread of the caller's own: reading the thread is enough.
    (
        "POST",
        "/api/threads/{thread_id}/fork",
        Rule::Thread(Access::Viewer),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/export",
        Rule::Thread(Access::Viewer),
    ),
    // The agent.
    (
        "POST",
        "/api/threads/{thread_id}/chat",
        Rule::Thread(Access::Editor),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/cancel",
        Rule::Thread(Access::Editor),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/messages",
        Rule::Thread(Access::Viewer),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/events",
        Rule::Thread(Access::Viewer),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/tools/{tool_name}",
        Rule::Thread(Access::Editor),
    ),
    // MCP.
    ("GET", "/mcp/{thread_id}", Rule::ThreadOrNew),
    ("POST", "/mcp/{thread_id}", Rule::ThreadOrNew),
    ("DELETE", "/mcp/{thread_id}", Rule::ThreadOrNew),
    // Answers every method with a pointer to `/mcp/{thread_id}`.
    ("*", "/mcp", Rule::Signed),
];

/// The rule of `method` on `route` (a matched route template). A method the table does not
/// list for a known route is [`Rule::Unserved`] (the caller learns it is not allowed once
/// they say who they are); `None` when the table does not know the route at all.
pub fn rule_for(method: &Method, route: &str) -> Option<Rule> {
    let method = if *method == Method::HEAD {
        "GET"
    } else {
        method.as_str()
    };
    let mut known = false;
    for (m, r, rule) in RULES {
        if *r == route {
            if *m == method || *m == "*" {
                return Some(*rule);
            }
            known = true;
        }
    }
    known.then_some(Rule::Unserved)
}

/// The `Allow` header of a 405 on `route`: the methods its rules list (`HEAD` with `GET`).
fn allowed_methods(route: &str) -> Option<HeaderValue> {
    let mut methods: Vec<&str> = RULES
        .iter()
        .filter(|(method, r, _)| *r == route && *method != "*")
        .map(|(method, _, _)| *method)
        .collect();
    if methods.contains(&"GET") {
        methods.push("HEAD");
    }
    HeaderValue::from_str(&methods.join(",")).ok()
}

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

/// The middleware: finds the caller, applies the route's rule, and hands the request on with
/// its [`Principal`] in the extensions.
/// The route of the health check, which needs no one and no database to let it through.
const HEALTH_ROUTE: &str = "/healthz";

pub(super) async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_string());
    let rule = match &route {
        Some(route) => match rule_for(&parts.method, route) {
            Some(rule) => rule,
            // A route the table forgot: refused, never guessed (the route walk test fails
            // first).
            None => {
                tracing::error!(method = %parts.method, route, "route without an access rule refused");
                return ApiError::Forbidden(format!(
                    "{} {route} has no access rule; this is a bug in haico",
                    parts.method
                ))
                .into_response();
            }
        },
        // Unknown paths: only those who say who they are learn that they do not exist.
        None => Rule::Signed,
    };
    // The health check is everybody's and must answer within its own time budget even while
    // the database (which knows the accounts) does not.
    if route.as_deref() == Some(HEALTH_ROUTE) {
        parts.extensions.insert(Principal::Anonymous);
        return next.run(Request::from_parts(parts, body)).await;
    }
    // Where the request comes from, before anything else is looked at (no database work for
    // a refused request).
    let guards = state.guards();
    let origin = match guards.origins.check(&parts) {
        Ok(origin) => origin,
        Err(refusal) => return refusal.into_response(),
    };
    let posts_to =
        |template: &str| parts.method == Method::POST && route.as_deref() == Some(template);
    let starts_turn = posts_to(CHAT_ROUTE);
    if posts_to(SESSION_ROUTE)
        && let Err(refusal) = guards.limits.sign_in(&parts)
    {
        return refusal.into_response();
    }
    let (principal, via) = match identify(&state, &parts, route.as_deref()).await {
        Ok(found) => found,
        // A wrong token does not keep anyone from what is open to everyone (a health check
        // with a stale token, the sign-in form).
        Err(_) if rule == Rule::Open => (Principal::Anonymous, Via::Nothing),
        Err(response) => return response,
    };
    // The browser adds the cookie by itself, so a change it signs must also show the page it
    // comes from (one from another site was refused above).
    if via == Via::Cookie && !is_safe(&parts.method) && !origin.vouches() {
        return ApiError::Forbidden(
            "a signed-in change must come from this server's own page: the request has no \
             Origin header"
                .to_string(),
        )
        .into_response();
    }
    let thread = RawPathParams::from_request_parts(&mut parts, &state)
        .await
        .ok()
        .and_then(|raw| {
            raw.iter()
                .find(|(key, _)| *key == "thread_id")
                .map(|(_, value)| value.to_string())
        });
    if let Err(mut response) = apply(&state, rule, &principal, thread.as_deref()).await {
        if rule == Rule::Unserved
            && let Some(allow) = route.as_deref().and_then(allowed_methods)
        {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        return response;
    }
    if starts_turn && let Err(refusal) = guards.limits.chat_turn(&principal, &parts) {
        return refusal.into_response();
    }
    parts.extensions.insert(principal);
    next.run(Request::from_parts(parts, body)).await
}

/// Who the request is.
async fn identify(
    state: &AppState,
    request: &Parts,
    route: Option<&str>,
) -> Result<(Principal, Via), Response> {
    let people = state.people();
    let accounts = people
        .accounts_exist()
        .await
        .map_err(|err| ApiError::from(err).into_response())?;
    if !accounts && state.admin_token().is_none() {
        return Ok((Principal::Local, Via::Nothing));
    }
    let token = match request.headers.get(header::AUTHORIZATION) {
        Some(value) => match bearer(value) {
            Some(token) => Some(token.to_string()),
            None => {
                return Err(unauthorized(
                    "the `Authorization` header must be `Bearer <token>`",
                    Some("invalid_request"),
                ));
            }
        },
        None if request.method == Method::GET && route == Some(EVENTS_ROUTE) => {
            query_token(&request.uri)
        }
        None => None,
    };
    if let Some(token) = token {
        if state
            .admin_token()
            .is_some_and(|admin| admin.matches(&token))
        {
            return Ok((Principal::AdminToken, Via::Token));
        }
        return match people.user_by_token(&token).await {
            Ok(Some(user)) => Ok((Principal::User(user), Via::Token)),
            Ok(None) => Err(unauthorized(
                "the token is not valid: send a personal token (an administrator can make a new \
                 one with `haico user reset-token NAME`) or the server's HAICO_API_TOKEN",
                Some("invalid_token"),
            )),
            Err(err) => Err(ApiError::from(err).into_response()),
        };
    }
    if let Some(key) = session_key(&request.headers) {
        return match people.session_user(&key).await {
            Ok(Some(user)) => Ok((Principal::User(user), Via::Cookie)),
            // An expired or signed-out session: nobody (the routes that need someone say so).
            Ok(None) => Ok((Principal::Anonymous, Via::Nothing)),
            Err(err) => Err(ApiError::from(err).into_response()),
        };
    }
    Ok((Principal::Anonymous, Via::Nothing))
}

/// Applies `rule` to `principal`; the refusal, if any.
async fn apply(
    state: &AppState,
    rule: Rule,
    principal: &Principal,
    thread: Option<&str>,
) -> Result<(), Response> {
    if rule == Rule::Open {
        return Ok(());
    }
    if *principal == Principal::Anonymous {
        return Err(unauthorized(
            "sign in first, or send `Authorization: Bearer <token>` (a personal token, or the \
             server's HAICO_API_TOKEN)",
            None,
        ));
    }
    let need = match rule {
        Rule::Open | Rule::Signed => return Ok(()),
        Rule::Unserved => {
            return Err(ApiError::unserved_method().into_response());
        }
        Rule::Admin if principal.is_admin() => return Ok(()),
        Rule::Admin => {
            return Err(ApiError::Forbidden(
                "only an administrator may do this (the HAICO_API_TOKEN holder, or an account \
                 made with --admin)"
                    .to_string(),
            )
            .into_response());
        }
        Rule::Thread(need) => need,
        Rule::ThreadOrNew => Access::Viewer,
    };
    // Administrators see every thread; the handler answers for one that does not exist.
    if principal.is_admin() {
        return Ok(());
    }
    let Some(thread) = thread else {
        return Err(
            ApiError::Internal("a thread route without a thread id".to_string()).into_response(),
        );
    };
    let thread = ThreadId::parse(thread).map_err(|err| ApiError::from(err).into_response())?;
    let access = state
        .people()
        .thread_access(principal, &thread)
        .await
        .map_err(|err| ApiError::from(err).into_response())?;
    match access {
        // No such thread: the MCP endpoint creates it for its caller (and checks again after).
        None if rule == Rule::ThreadOrNew => Ok(()),
        None | Some(Access::None) => {
            Err(ApiError::thread_not_found(thread.as_str()).into_response())
        }
        Some(access) if access >= need => Ok(()),
        Some(_) => Err(ApiError::Forbidden(refusal(need)).into_response()),
    }
}

/// What a person with too little access is told.
fn refusal(need: Access) -> String {
    match need {
        Access::Owner => "only the thread's owner (or an administrator) may do this".to_string(),
        _ => "you may read this thread but not change it: ask its owner to share it with you as \
              an editor"
            .to_string(),
    }
}

/// The session key of the request's cookie, if it has one.
pub(super) fn session_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == SESSION_COOKIE && !c.value().is_empty())
        .map(|c| c.value().to_string())
}

/// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive).
pub(super) fn bearer(value: &HeaderValue) -> Option<&str> {
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
fn unauthorized(message: &str, error: Option<&str>) -> Response {
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

/// The application state acting as the request's caller: take it instead of `State` in a
/// handler whose changes must record who made them (or that needs to know who asks).
#[derive(Debug, Clone)]
pub struct Acting(pub AppState);

impl FromRequestParts<AppState> for Acting {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        // The middleware always puts one there; without it, the request acts as nobody.
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .unwrap_or(Principal::Anonymous);
        Ok(Acting(state.acting_as(principal)))
    }
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
    fn head_follows_get_and_unknown_routes_have_no_rule() {
        assert_eq!(rule_for(&Method::HEAD, "/healthz"), Some(Rule::Open));
        assert_eq!(
            rule_for(&Method::DELETE, "/api/threads/{thread_id}"),
            Some(Rule::Thread(Access::Owner))
        );
        assert_eq!(rule_for(&Method::GET, "/api/nope"), None);
        assert_eq!(
            rule_for(&Method::PUT, "/api/threads/{thread_id}/chat"),
            Some(Rule::Unserved),
            "a method the route does not serve is answered 405 to those who say who they are"
        );
        assert_eq!(rule_for(&Method::OPTIONS, "/mcp"), Some(Rule::Signed));
    }
}
