//! The shapes the API's documentation shares: the error body, the error responses every route
//! of a kind answers, and the typed path parameters. A leaf module: it names no handler.
//!
//! Handlers take their path as one of the structs below (`Path<ThreadPath>`, …), so a thread id
//! is validated while the path is extracted (a malformed one is a 400 before the handler
//! runs) and the same struct documents the parameter.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, IntoResponses, ToSchema};

use haico_store::ThreadId;

use haico_core::wire::Document;

/// The body of every error: `{"error": "<what went wrong and how to fix it>"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in words meant for the person using the API.
    error: String,
}

/// The `409` of a stale document write: the error and the document as it is now.
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentConflict {
    /// What went wrong.
    error: String,
    /// The current document, to merge into and send again with its `version`.
    document: Document,
}

/// What every route with a thread (and perhaps an item) in its path may answer.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum PathErrors {
    /// An id in the path (or the query string) is malformed
    #[response(status = 400)]
    Malformed(ErrorBody),
    /// The thread, or the item the path names, does not exist
    #[response(status = 404)]
    NotFound(ErrorBody),
}

/// What every route that reads a JSON body may answer about the body.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum BodyErrors {
    /// Invalid input: JSON that does not parse, or a value that breaks a rule (the text says
    /// which)
    #[response(status = 400)]
    Invalid(ErrorBody),
    /// The body is larger than HAICO_MAX_BODY_BYTES
    #[response(status = 413)]
    TooLarge(ErrorBody),
    /// The body is not declared as `application/json`
    #[response(status = 415)]
    NotJson(ErrorBody),
    /// The JSON does not have the expected shape (the text names the field)
    #[response(status = 422)]
    WrongShape(ErrorBody),
}

/// A thread in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ThreadPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
}

/// A step of a thread's plan in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct StepPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
    /// The step's id.
    pub todo_id: i64,
}

/// A preference of a thread in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct PreferencePath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
    /// The preference's id.
    pub preference_id: i64,
}

/// An artifact of a thread in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ArtifactPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
    /// The artifact's id.
    pub artifact_id: i64,
}

/// A tool called on a thread, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ToolPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
    /// The tool's name, as in `GET /api/tools`.
    pub tool_name: String,
}

/// An agent turn of a thread in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TurnPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    pub thread_id: ThreadId,
    /// The turn's number, from 1.
    pub turn_index: i64,
}

/// The shared `401` response, which every route asking for someone lists (see
/// `guards/authorized.rs`).
pub(super) const UNAUTHORIZED: &str = "Unauthorized";
/// The shared `403` response of routes that need more than reading.
pub(super) const FORBIDDEN: &str = "Forbidden";
