//! People over HTTP: accounts (`/api/users…`, administrators only), signing in and out of
//! the web UI (`/api/session`), who the caller is (`GET /api/me`), and whom a thread is shared
//! with (`/api/threads/{thread_id}/members…`, its owner and administrators). Who may call each
//! route is what its handler's `Authorized<…>` names; the rule itself is [`crate::people::may`].

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::error::ApiError, http::extract::Json, http::extract::Path,
    http::guards::identify::SESSION_COOKIE, http::guards::identify::session_key,
    http::guards::limits::client_address, http::schema::BodyErrors, http::schema::ErrorBody,
    http::schema::PathErrors, http::schema::ThreadPath, http::state::AppState, http::wire,
    http::wire::Member, http::wire::User,
};
use crate::{
    http::guards::authorized::Administer, http::guards::authorized::Anyone,
    http::guards::authorized::Authorized, http::guards::authorized::ManageSharing,
    http::guards::authorized::SignInAllowed, http::guards::authorized::UseServer,
};
use haico_core::{people::Principal, people::SESSION_DAYS};
use haico_store as store;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(session_state, sign_in, sign_out))
        .routes(routes!(me))
        .routes(routes!(list_users, create_user))
        .routes(routes!(remove_user))
        .routes(routes!(reset_token))
        .routes(routes!(members))
        .routes(routes!(share, unshare))
}

/// Who the caller is. In one-person mode, and for the administrator's token, there is no
/// account: `id` and `name` are null and the role is `admin`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Me {
    /// The account's id.
    id: Option<i64>,
    /// The account's name.
    name: Option<String>,
    /// `admin` or `member`.
    role: String,
}

impl Me {
    fn of(principal: &Principal) -> Self {
        match principal {
            Principal::User(user) => Self {
                id: Some(user.id),
                name: Some(user.name.clone()),
                role: user.role.clone(),
            },
            _ => Self {
                id: None,
                name: None,
                role: if principal.is_admin() {
                    "admin"
                } else {
                    "member"
                }
                .to_string(),
            },
        }
    }
}

/// What the web UI needs to know before anything else.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct SessionState {
    /// Whether accounts exist (then the page shows a sign-in form to someone not signed in).
    accounts: bool,
    /// The person signed in with this browser's session, if any.
    user: Option<User>,
}

/// Body of `POST /api/session`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SignIn {
    name: String,
    password: String,
}

/// Body of `POST /api/users`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewUser {
    /// 1 to 64 characters from A–Z, a–z, 0–9, `.`, `_` and `-`.
    name: String,
    /// For signing in to the web UI (at least 8 characters); without one the account has only
    /// its personal token.
    password: Option<String>,
    /// `admin` or `member` (the default).
    role: Option<String>,
}

/// An account with its personal token, shown this once (only its hash is kept).
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct UserWithToken {
    id: i64,
    name: String,
    role: String,
    created_at: DateTime<Utc>,
    /// The personal API token: `Authorization: Bearer <token>`. Not shown again.
    token: String,
}

impl UserWithToken {
    fn new(user: store::User, token: String) -> Self {
        Self {
            id: user.id,
            name: user.name,
            role: user.role,
            created_at: user.created_at,
            token,
        }
    }
}

/// An account name in the path.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct NamePath {
    /// The account's name.
    name: String,
}

/// A thread and an account name in the path.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct MemberPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: haico_store::ThreadId,
    /// The account's name.
    name: String,
}

/// Body of `PUT …/members/{name}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Share {
    /// `viewer` (reads everything) or `editor` (also chats, calls tools and edits).
    role: String,
}

#[utoipa::path(
    get,
    path = "/api/session",
    tag = "people",
    summary = "Whether accounts exist, and who this browser is signed in as",
    security(()),
    responses(Anyone, (status = 200, description = "The sign-in state", body = SessionState)),
)]
async fn session_state(
    Authorized(state, _): Authorized<Anyone>,
    headers: HeaderMap,
) -> Result<Json<SessionState>, ApiError> {
    let people = state.people();
    let accounts = people.accounts_exist().await?;
    let user = match session_key(&headers) {
        Some(key) if accounts => people.session_user(&key).await?,
        _ => None,
    };
    Ok(Json(SessionState {
        accounts,
        user: user.map(User::from),
    }))
}

#[utoipa::path(
    post,
    path = "/api/session",
    tag = "people",
    summary = "Sign in (sets the session cookie)",
    security(()),
    request_body(content = SignIn, content_type = "application/json"),
    responses(
        Anyone,
        (status = 200, description = "Signed in: `Set-Cookie: haico_session=…; HttpOnly; SameSite=Strict` (and `Secure` behind HTTPS), valid 14 days or until signed out", body = User),
        BodyErrors,
        (status = 401, description = "The name or the password is wrong", body = ErrorBody),
        (status = 403, description = "The request came from another site's page", body = ErrorBody),
        (status = 429, description = "Too many wrong passwords for this account or address, or too many attempts from this address (HAICO_SIGN_INS_PER_MINUTE): wait `Retry-After` seconds", body = ErrorBody),
    ),
)]
async fn sign_in(
    _: SignInAllowed,
    Authorized(state, _): Authorized<Anyone>,
    headers: HeaderMap,
    Peer(peer): Peer,
    Json(body): Json<SignIn>,
) -> Result<Response, ApiError> {
    // A sign-in from another site's page (which would sign this browser in as someone else)
    // never gets here: the cross-site policy (`origin`) refuses it first.
    let address = client_address(&headers, peer);
    let (user, key, _expires) = state
        .people()
        .sign_in(&body.name, &body.password, &address)
        .await?;
    let cookie = cookie::Cookie::build((SESSION_COOKIE, key))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Strict)
        .secure(behind_tls(&headers))
        .max_age(cookie::time::Duration::days(SESSION_DAYS))
        .build();
    let mut response = Json(User::from(user)).into_response();
    set_cookie(&mut response, &cookie);
    Ok(response)
}

#[utoipa::path(
    delete,
    path = "/api/session",
    tag = "people",
    summary = "Sign out (ends the session on the server and clears the cookie)",
    security(()),
    responses(Anyone, (status = 204, description = "Signed out (also when no session was open)")),
)]
async fn sign_out(
    Authorized(state, _): Authorized<Anyone>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(key) = session_key(&headers) {
        state.people().sign_out(&key).await?;
    }
    let cookie = cookie::Cookie::build((SESSION_COOKIE, ""))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Strict)
        .secure(behind_tls(&headers))
        .max_age(cookie::time::Duration::ZERO)
        .build();
    let mut response = StatusCode::NO_CONTENT.into_response();
    set_cookie(&mut response, &cookie);
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/api/me",
    tag = "people",
    summary = "Who the caller is",
    responses(UseServer, (status = 200, description = "The caller", body = Me)),
)]
async fn me(Authorized(state, _): Authorized<UseServer>) -> Json<Me> {
    Json(Me::of(state.principal()))
}

#[utoipa::path(
    get,
    path = "/api/users",
    tag = "people",
    summary = "List the accounts (administrators)",
    responses(
        Administer,
        (status = 200, description = "Every account, by name (never a password hash or token)", body = Vec<User>),
        (status = 403, description = "The caller is not an administrator", body = ErrorBody),
    ),
)]
async fn list_users(
    Authorized(state, _): Authorized<Administer>,
) -> Result<Json<Vec<User>>, ApiError> {
    Ok(Json(wire::list(state.people().users().await?)))
}

#[utoipa::path(
    post,
    path = "/api/users",
    tag = "people",
    summary = "Make an account (administrators)",
    request_body(content = NewUser, content_type = "application/json"),
    responses(
        Administer,
        (status = 201, description = "The account with its personal token, shown this once", body = UserWithToken),
        BodyErrors,
        (status = 403, description = "The caller is not an administrator", body = ErrorBody),
        (status = 409, description = "An account with that name exists", body = ErrorBody),
    ),
)]
async fn create_user(
    Authorized(state, _): Authorized<Administer>,
    Json(body): Json<NewUser>,
) -> Result<(StatusCode, Json<UserWithToken>), ApiError> {
    let admin = match body.role.as_deref() {
        None | Some("member") => false,
        Some("admin") => true,
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "`role` is {other:?}: use \"member\" (the default) or \"admin\""
            )));
        }
    };
    let (user, token) = state
        .people()
        .create_user(&body.name, admin, body.password.as_deref())
        .await?;
    Ok((StatusCode::CREATED, Json(UserWithToken::new(user, token))))
}

#[utoipa::path(
    delete,
    path = "/api/users/{name}",
    tag = "people",
    summary = "Remove an account (administrators)",
    params(NamePath),
    responses(
        Administer,
        (status = 204, description = "Removed: its sessions end and its token stops working; threads it owned stay, without an owner (administrators see them)"),
        (status = 400, description = "The name is not a valid account name, or it is the caller's own account", body = ErrorBody),
        (status = 403, description = "The caller is not an administrator", body = ErrorBody),
        (status = 404, description = "No such account", body = ErrorBody),
    ),
)]
async fn remove_user(
    Authorized(state, _): Authorized<Administer>,
    Path(path): Path<NamePath>,
) -> Result<StatusCode, ApiError> {
    if state.principal().name() == Some(path.name.as_str()) {
        return Err(ApiError::BadRequest(
            "you cannot remove your own account; another administrator can".to_string(),
        ));
    }
    state.people().remove_user(&path.name).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/api/users/{name}/token",
    tag = "people",
    summary = "Give an account a new personal token (administrators)",
    params(NamePath),
    responses(
        Administer,
        (status = 200, description = "The account with its new token, shown this once; the old token stops working", body = UserWithToken),
        (status = 400, description = "The name is not a valid account name", body = ErrorBody),
        (status = 403, description = "The caller is not an administrator", body = ErrorBody),
        (status = 404, description = "No such account", body = ErrorBody),
    ),
)]
async fn reset_token(
    Authorized(state, _): Authorized<Administer>,
    Path(path): Path<NamePath>,
) -> Result<Json<UserWithToken>, ApiError> {
    let (user, token) = state.people().reset_token(&path.name).await?;
    Ok(Json(UserWithToken::new(user, token)))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/members",
    tag = "people",
    summary = "Whom the thread is shared with (its owner and administrators)",
    params(ThreadPath),
    responses(
        ManageSharing,
        (status = 200, description = "The owner first (when it has one), then editors and viewers, by name", body = Vec<Member>),
        PathErrors,
        (status = 403, description = "The caller may see the thread but does not own it", body = ErrorBody),
    ),
)]
async fn members(
    Authorized(state, _): Authorized<ManageSharing>,
    Path(path): Path<ThreadPath>,
) -> Result<Json<Vec<Member>>, ApiError> {
    state.workspaces().threads().get(&path.thread_id).await?;
    Ok(Json(wire::list(
        state.people().members(&path.thread_id).await?,
    )))
}

#[utoipa::path(
    put,
    path = "/api/threads/{thread_id}/members/{name}",
    tag = "people",
    summary = "Share the thread with a person, or change their role",
    params(MemberPath),
    request_body(content = Share, content_type = "application/json"),
    responses(
        ManageSharing,
        (status = 200, description = "The thread's members now", body = Vec<Member>),
        PathErrors,
        BodyErrors,
        (status = 403, description = "The caller may see the thread but does not own it", body = ErrorBody),
    ),
)]
async fn share(
    Authorized(state, _): Authorized<ManageSharing>,
    Path(path): Path<MemberPath>,
    Json(body): Json<Share>,
) -> Result<Json<Vec<Member>>, ApiError> {
    state.workspaces().threads().get(&path.thread_id).await?;
    Ok(Json(wire::list(
        state
            .people()
            .share(&path.thread_id, &path.name, &body.role)
            .await?,
    )))
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}/members/{name}",
    tag = "people",
    summary = "Stop sharing the thread with a person",
    params(MemberPath),
    responses(
        ManageSharing,
        (status = 200, description = "The thread's members now", body = Vec<Member>),
        PathErrors,
        (status = 403, description = "The caller may see the thread but does not own it", body = ErrorBody),
    ),
)]
async fn unshare(
    Authorized(state, _): Authorized<ManageSharing>,
    Path(path): Path<MemberPath>,
) -> Result<Json<Vec<Member>>, ApiError> {
    state.workspaces().threads().get(&path.thread_id).await?;
    Ok(Json(wire::list(
        state.people().unshare(&path.thread_id, &path.name).await?,
    )))
}

/// The peer's address, when the server was started with it (`haico::http::serve` is).
struct Peer(Option<std::net::SocketAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|info| info.0),
        ))
    }
}

/// Whether the browser reached the server over HTTPS (through a proxy that says so): then the
/// cookie is marked `Secure`.
fn behind_tls(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("proto=https"));
    forwarded_proto || forwarded
}

fn set_cookie(response: &mut Response, cookie: &cookie::Cookie<'_>) {
    if let Ok(value) = HeaderValue::from_str(&cookie.to_string()) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}
