//! The HTTP layer's one error type: a status code and a `{"error": "…"}` body.

use axum::{
    extract::{
        path::ErrorKind,
        rejection::{BytesRejection, JsonRejection, PathRejection},
    },
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde_json::json;

use haico_store::{InvalidThreadId, StoreError};

use haico_core::{wire::Document, workspace::WorkspaceError};

use crate::studies::StudyError;

/// The `Retry-After` (seconds) of an answer given while the database is unavailable: long
/// enough not to hammer a server that is coming back, short enough to notice it is back.
pub const OUTAGE_RETRY_AFTER_SECS: u64 = 2;

/// Everything a handler can fail with. Caller mistakes map to 4xx; the database failing (and
/// a bug inside the server) is a 5xx, whose details go to the log, not the client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed or breaks a rule; the text says how.
    #[error("{0}")]
    BadRequest(String),
    /// The body is JSON of the wrong shape.
    #[error("{0}")]
    Unprocessable(String),
    /// The thing named in the path does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the current state (an id that exists already).
    #[error("{0}")]
    Conflict(String),
    /// A document write named a version that is no longer current; the answer carries the
    /// current document, so the editor can merge and retry.
    #[error("{message}")]
    StaleDocument {
        /// What happened and what to do.
        message: String,
        /// The document as it is now.
        document: Document,
    },
    /// Later changes stand in the way; the answer lists them.
    #[error("{message}")]
    Conflicts {
        /// What happened and what to do.
        message: String,
        /// The conflicting later changes.
        conflicts: Vec<haico_core::workspace::RevertConflict>,
    },
    /// The body is larger than the server accepts.
    #[error("{0}")]
    TooLarge(String),
    /// The body is not declared as JSON.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The path exists but does not answer this method.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// `401`: the request did not say who it is, or said it wrongly (no `WWW-Authenticate`:
    /// the token check adds its own challenge).
    #[error("{0}")]
    Unauthorized(String),
    /// `403`: the caller is known and may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// `429`: too many attempts; try again after this many seconds.
    #[error("{message}")]
    TooManyRequests {
        /// What to do.
        message: String,
        /// Seconds to wait (`Retry-After`).
        retry_after: u64,
    },
    /// `503`: this server cannot take the request now (it is shutting down); another replica
    /// or a retry in a moment can.
    #[error("{0}")]
    Unavailable(String),
    /// The database failed.
    #[error("storage error")]
    Store(#[from] StoreError),
    /// Something inside the server failed that no request should make fail (a panic in a
    /// worker task); the text says what could not be done, the log says why.
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// The answer to a method a route does not serve (from the router's fallback, or from the
    /// access guard for a method its table does not list).
    pub(super) fn unserved_method() -> Self {
        ApiError::MethodNotAllowed("this route does not accept that method".to_string())
    }

    /// The status code the error answers with.
    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) | ApiError::StaleDocument { .. } | ApiError::Conflicts { .. } => {
                StatusCode::CONFLICT
            }
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Store(_) | ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The body is over the configured limit.
    pub fn too_large() -> Self {
        ApiError::TooLarge("request body is too large; see HAICO_MAX_BODY_BYTES".to_string())
    }

    /// "thread `x` not found".
    pub fn thread_not_found(id: &str) -> Self {
        WorkspaceError::UnknownThread(id.to_string()).into()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let message = match &self {
            ApiError::Store(err) => {
                tracing::error!(error = %err, "request failed in storage");
                let body = json!({
                    "error": "the database is unavailable; try again shortly (GET /healthz says why)"
                });
                let mut response = (status, axum::Json(body)).into_response();
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(OUTAGE_RETRY_AFTER_SECS),
                );
                return response;
            }
            ApiError::Conflicts { message, conflicts } => {
                let body = json!({ "error": message, "conflicts": conflicts });
                return (status, axum::Json(body)).into_response();
            }
            ApiError::TooManyRequests {
                message,
                retry_after,
            } => {
                let mut response =
                    (status, axum::Json(json!({ "error": message }))).into_response();
                if let Ok(value) = axum::http::HeaderValue::from_str(&retry_after.to_string()) {
                    response
                        .headers_mut()
                        .insert(axum::http::header::RETRY_AFTER, value);
                }
                return response;
            }
            ApiError::StaleDocument { message, document } => {
                let body = json!({ "error": message, "document": document });
                return (status, axum::Json(body)).into_response();
            }
            other => other.to_string(),
        };
        (status, axum::Json(json!({ "error": message }))).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let text = rejection.body_text();
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::UnsupportedMediaType(
                "send a JSON body with `Content-Type: application/json`".to_string(),
            ),
            StatusCode::UNPROCESSABLE_ENTITY => ApiError::Unprocessable(text),
            _ => ApiError::BadRequest(text),
        }
    }
}

/// A raw body that could not be read: over the size limit, or the connection failed.
impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::too_large(),
            _ => ApiError::BadRequest(rejection.body_text()),
        }
    }
}

/// A path that does not fit its route's parameters: a malformed thread id says why in its own
/// words (the id rule), anything else in axum's.
impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        if let PathRejection::FailedToDeserializePathParams(failed) = &rejection
            && let ErrorKind::Message(message) = failed.kind()
        {
            return ApiError::BadRequest(message.clone());
        }
        ApiError::BadRequest(rejection.body_text())
    }
}

/// A workspace rule refusing a request: the rule's own text, with the status that fits.
impl From<WorkspaceError> for ApiError {
    fn from(err: WorkspaceError) -> Self {
        let message = err.to_string();
        match err {
            WorkspaceError::Invalid(_) => ApiError::BadRequest(message),
            WorkspaceError::NotFound(_) | WorkspaceError::UnknownThread(_) => {
                ApiError::NotFound(message)
            }
            WorkspaceError::ThreadExists(_)
            | WorkspaceError::Busy
            | WorkspaceError::Conflict(_) => ApiError::Conflict(message),
            WorkspaceError::Mismatch(_) => ApiError::Unprocessable(message),
            WorkspaceError::StaleDocument { current, .. } => ApiError::StaleDocument {
                message,
                document: current.into(),
            },
            WorkspaceError::Conflicts { conflicts, .. } => {
                ApiError::Conflicts { message, conflicts }
            }
            WorkspaceError::Store(store) => ApiError::Store(store),
        }
    }
}

impl From<InvalidThreadId> for ApiError {
    fn from(err: InvalidThreadId) -> Self {
        ApiError::BadRequest(err.to_string())
    }
}

impl From<haico_core::people::PeopleError> for ApiError {
    fn from(err: haico_core::people::PeopleError) -> Self {
        use haico_core::people::PeopleError;
        let message = err.to_string();
        match err {
            PeopleError::Invalid(_) => ApiError::BadRequest(message),
            PeopleError::NotFound(_) => ApiError::NotFound(message),
            PeopleError::Exists(_) => ApiError::Conflict(message),
            PeopleError::WrongPassword => ApiError::Unauthorized(message),
            PeopleError::SlowDown(wait) => ApiError::TooManyRequests {
                message,
                retry_after: wait.as_secs().max(1),
            },
            PeopleError::Forbidden(_) => ApiError::Forbidden(message),
            PeopleError::Internal(_) => ApiError::Internal(message),
            PeopleError::Store(store) => ApiError::Store(store),
        }
    }
}

/// A study refusal as an HTTP answer: `422` naming the design's field, `410` for a closed
/// study's link, `409` with `status: "full"` or `needs`, `409 time is up`.
#[derive(Debug)]
pub(crate) struct StudyFailure(pub(crate) StudyError);

impl From<StudyError> for StudyFailure {
    fn from(err: StudyError) -> Self {
        Self(err)
    }
}

impl IntoResponse for StudyFailure {
    fn into_response(self) -> Response {
        let err = self.0;
        let status = match &err {
            StudyError::Design(_) | StudyError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            StudyError::BadRequest(_) => StatusCode::BAD_REQUEST,
            StudyError::NotFound(_) => StatusCode::NOT_FOUND,
            StudyError::Closed => StatusCode::GONE,
            StudyError::Conflict(_)
            | StudyError::Full
            | StudyError::TimeIsUp
            | StudyError::NeedsTurns { .. } => StatusCode::CONFLICT,
            StudyError::Forbidden(_) => StatusCode::FORBIDDEN,
            StudyError::Workspace(_) | StudyError::Store(_) | StudyError::Internal(_) => {
                let api = match err {
                    StudyError::Workspace(err) => ApiError::from(err),
                    StudyError::Store(err) => ApiError::Store(err),
                    other => {
                        tracing::error!(error = %other, "a study operation failed inside");
                        ApiError::Internal("the study operation failed inside the server".into())
                    }
                };
                return api.into_response();
            }
        };
        let body = match &err {
            StudyError::Full => json!({"error": err.to_string(), "status": "full"}),
            StudyError::NeedsTurns { turns } => {
                json!({"error": err.to_string(), "needs": {"turns": turns}})
            }
            StudyError::Design(fault) => json!({"error": err.to_string(), "path": fault.path}),
            _ => json!({"error": err.to_string()}),
        };
        (status, axum::Json(body)).into_response()
    }
}
