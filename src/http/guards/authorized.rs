//! `Authorized<…>`: the extractor through which a handler says what it asks to do, so its
//! signature is its access rule. `Authorized<Edit>` lets the request through only when its
//! caller may edit the thread in its path; `Authorized<Administer>` only for an administrator;
//! `Authorized<Anyone>` always. The rule itself is [`crate::people::may`]; this applies it and
//! words its refusals for HTTP:
//!
//! - nobody signed in: `401` with `WWW-Authenticate: Bearer` (also for a wrong token);
//! - a thread the caller may not see: the same `404` as a thread that does not exist;
//! - too little access (a viewer changing, someone not the owner sharing), or not an
//!   administrator: `403` saying what they may do.
//!
//! The extractor comes first in a handler's arguments, so nothing else of the request (its
//! path's other ids, its body) is looked at before the caller may ask. Each marker also
//! documents its refusals in the OpenAPI document (`responses(Edit, …)` next to the handler),
//! and `tests/integration/people/access.rs` calls every route as every kind of caller.

use std::{collections::BTreeMap, marker::PhantomData};

use axum::{
    extract::{FromRequestParts, MatchedPath, RawPathParams},
    http::request::Parts,
    response::{IntoResponse, Response},
};
use utoipa::{
    IntoResponses,
    openapi::{Ref, RefOr, response::Response as DocResponse},
};

use super::identify::{Caller, unauthorized};
use crate::{
    http::error::ApiError, http::schema::FORBIDDEN, http::schema::UNAUTHORIZED,
    http::state::AppState, studies::access::ParticipantRoute, studies::access::participant_route,
    tools::build_tools,
};
use haico_core::{
    people::Need, people::Op, people::Participant, people::Principal, people::Refusal,
    people::ToolUse,
};
use haico_store::ThreadId;

/// The path parameters of a request, by name.
pub struct Params(Vec<(String, String)>);

impl Params {
    /// The parameter `name`, when the route has one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What a handler asks to do, named as the type parameter of [`Authorized`].
pub trait Asks: Send + Sync + 'static {
    /// The operation a request asks for, given its path parameters; `None` when the route is
    /// open to anyone, signed in or not.
    fn op(params: &Params) -> Option<Op>;
}

/// The application state acting as a caller who may do what the handler asks (`A`): its changes
/// record that person. Refused, before the handler runs, for anyone else.
#[derive(Debug, Clone)]
pub struct Authorized<A>(pub AppState, pub PhantomData<A>);

impl<A: Asks> FromRequestParts<AppState> for Authorized<A> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let caller = Caller::resolve(parts, state).await?;
        let params = match RawPathParams::from_request_parts(parts, state).await {
            Ok(raw) => Params(
                raw.iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
            ),
            Err(_) => Params(Vec::new()),
        };
        let Some(op) = A::op(&params) else {
            return Ok(Self(state.acting_as(caller.anyone()), PhantomData));
        };
        let principal = caller.principal().map_err(|refusal| *refusal)?;
        if principal == Principal::Anonymous {
            return Err(refused(Refusal::SignIn, None));
        }
        if let Principal::Participant(participant) = &principal {
            if let Some(refusal) = participant_refusal(parts, &params, op, participant) {
                return Err(refusal);
            }
            return Ok(Self(state.acting_as(principal), PhantomData));
        }
        // Administrators are let through to any thread, so only others' ids are looked at.
        let thread = match (
            op.on_thread() && !principal.is_admin(),
            params.get("thread_id"),
        ) {
            (false, _) => None,
            (true, Some(raw)) => {
                Some(ThreadId::parse(raw).map_err(|err| ApiError::from(err).into_response())?)
            }
            (true, None) => {
                return Err(
                    ApiError::Internal("a thread route without a thread id".to_string())
                        .into_response(),
                );
            }
        };
        match state.people().may(&principal, thread.as_ref(), op).await {
            Ok(Ok(())) => {
                researchers_only_read(state, &params, op).await?;
                Ok(Self(state.acting_as(principal), PhantomData))
            }
            Ok(Err(refusal)) => Err(refused(refusal, thread.as_ref())),
            Err(err) => Err(ApiError::from(err).into_response()),
        }
    }
}

/// A study participant reaches only its own thread, and of it only what its condition shows
/// (`studies::access`): anything else does not exist for it (`404`), a hidden panel is `403`,
/// and a change outside its running time is `409` (`time is up` after the deadline). The
/// answer to a request it may not make; `None` when it may.
fn participant_refusal(
    parts: &Parts,
    params: &Params,
    op: Op,
    participant: &Participant,
) -> Option<Response> {
    let no_route = || ApiError::NotFound("no such route".to_string()).into_response();
    if !op.on_thread() {
        return Some(no_route());
    }
    let raw = params.get("thread_id").unwrap_or_default();
    let thread = match ThreadId::parse(raw) {
        Ok(thread) => thread,
        Err(err) => return Some(ApiError::from(err).into_response()),
    };
    if participant.thread.as_ref() != Some(&thread) {
        return Some(ApiError::thread_not_found(thread.as_str()).into_response());
    }
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .unwrap_or_default();
    match participant_route(parts.method.as_str(), route, &participant.panels) {
        ParticipantRoute::Unknown => Some(no_route()),
        ParticipantRoute::HiddenPanel => Some(
            ApiError::Forbidden("this panel is not part of your task".to_string()).into_response(),
        ),
        ParticipantRoute::Allowed { writes: false } => None,
        ParticipantRoute::Allowed { writes: true } => crate::studies::write_refusal(participant)
            .map(|refusal| crate::http::error::StudyFailure(refusal).into_response()),
    }
}

/// Researchers read their participants' threads and never change them: a change of a
/// participant's thread by anyone but its participant is `403`, administrators included.
async fn researchers_only_read(state: &AppState, params: &Params, op: Op) -> Result<(), Response> {
    let changes = matches!(
        op,
        Op::Edit | Op::Chat | Op::CallTool(ToolUse::Writes) | Op::Share | Op::Delete
    );
    let Some(thread) = params
        .get("thread_id")
        .filter(|_| changes)
        .and_then(|raw| ThreadId::parse(raw).ok())
    else {
        return Ok(());
    };
    match state.studies().is_participant_thread(&thread).await {
        Ok(false) => Ok(()),
        Ok(true) => Err(ApiError::Forbidden(
            "this thread is a study participant's: researchers may read it but never change it"
                .to_string(),
        )
        .into_response()),
        Err(err) => Err(crate::http::error::StudyFailure(err).into_response()),
    }
}

/// The HTTP answer to `refusal`, about `thread` when it concerns one.
pub(in crate::http) fn refused(refusal: Refusal, thread: Option<&ThreadId>) -> Response {
    match refusal {
        Refusal::SignIn => unauthorized(&refusal.to_string(), None),
        Refusal::NoThread => match thread {
            Some(thread) => ApiError::thread_not_found(thread.as_str()).into_response(),
            None => ApiError::NotFound(refusal.to_string()).into_response(),
        },
        Refusal::AdminOnly | Refusal::ReadOnly | Refusal::OwnerOnly => {
            ApiError::Forbidden(refusal.to_string()).into_response()
        }
    }
}

/// The refusals a route asking for `op` may answer, as the OpenAPI document lists them.
fn documented(op: Option<Op>) -> BTreeMap<String, RefOr<DocResponse>> {
    let mut responses = BTreeMap::new();
    let Some(op) = op else {
        return responses;
    };
    responses.insert(
        "401".to_string(),
        RefOr::Ref(Ref::from_response_name(UNAUTHORIZED)),
    );
    if matches!(
        op.needs(),
        Need::Admin
            | Need::Thread(haico_core::people::Access::Editor | haico_core::people::Access::Owner)
    ) {
        responses.insert(
            "403".to_string(),
            RefOr::Ref(Ref::from_response_name(FORBIDDEN)),
        );
    }
    responses
}

/// Declares a marker that asks for one fixed operation.
macro_rules! asks {
    ($(#[$doc:meta])* $name:ident => $op:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;

        impl Asks for $name {
            fn op(_: &Params) -> Option<Op> {
                $op
            }
        }

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<DocResponse>> {
                documented($op)
            }
        }
    };
}

asks!(
    /// Open to anyone, signed in or not (signing in, the web UI's shell).
    Anyone => None
);
asks!(
    /// Anyone signed in ([`Op::UseServer`]).
    UseServer => Some(Op::UseServer)
);
asks!(
    /// An administrator ([`Op::Administer`]).
    Administer => Some(Op::Administer)
);
asks!(
    /// Reading the thread in the path ([`Op::Read`]): its viewers, editors and owner.
    Read => Some(Op::Read)
);
asks!(
    /// Changing the thread in the path on the user path ([`Op::Edit`]).
    Edit => Some(Op::Edit)
);
asks!(
    /// Starting or cancelling an agent turn on the thread in the path ([`Op::Chat`]).
    Chat => Some(Op::Chat)
);
asks!(
    /// Saying whom the thread in the path is shared with ([`Op::Share`]).
    ManageSharing => Some(Op::Share)
);
asks!(
    /// Deleting the thread in the path ([`Op::Delete`]).
    Delete => Some(Op::Delete)
);

/// Calling the tool named in the path on the thread in the path ([`Op::CallTool`]): a tool
/// that only reads is a viewer's, one that writes an editor's. An unknown tool asks only to
/// read (the handler answers that it does not exist).
#[derive(Debug, Clone, Copy)]
pub struct CallTool;

impl Asks for CallTool {
    fn op(params: &Params) -> Option<Op> {
        let tool = params.get("tool_name").unwrap_or_default();
        let read_only = match params.get("thread_id").map(ThreadId::parse) {
            Some(Ok(thread)) => build_tools(&thread).get(tool).map(|tool| tool.read_only()),
            _ => None,
        };
        Some(match read_only {
            Some(read_only) => Op::CallTool(ToolUse::of(read_only)),
            None => Op::Read,
        })
    }
}

impl IntoResponses for CallTool {
    fn responses() -> BTreeMap<String, RefOr<DocResponse>> {
        documented(Some(Op::CallTool(ToolUse::Writes)))
    }
}

/// Counts the chat turn a request starts against its caller's rate limit
/// (`HAICO_CHAT_TURNS_PER_MINUTE`): named after `Authorized<Chat>` by the handler that starts
/// turns, so only a turn its caller may start is counted.
#[derive(Debug, Clone, Copy)]
pub struct TurnAllowed;

impl FromRequestParts<AppState> for TurnAllowed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let principal = Caller::of(parts).anyone();
        state.guards().limits.chat_turn(&principal, parts)?;
        Ok(TurnAllowed)
    }
}

/// Counts a sign-in attempt against its address's rate limit (`HAICO_SIGN_INS_PER_MINUTE`).
#[derive(Debug, Clone, Copy)]
pub struct SignInAllowed;

impl FromRequestParts<AppState> for SignInAllowed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        state.guards().limits.sign_in(parts)?;
        Ok(SignInAllowed)
    }
}

/// A path no route serves: only those who say who they are learn that it does not exist.
pub(in crate::http) async fn no_route(_: Authorized<UseServer>) -> ApiError {
    ApiError::NotFound("no such route".to_string())
}

/// A method the route does not serve: whoever says who they are learns `405` (axum adds the
/// `Allow` header).
pub(in crate::http) async fn unserved_method(_: Authorized<UseServer>) -> ApiError {
    ApiError::unserved_method()
}
