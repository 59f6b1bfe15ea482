//! `GET /api/info`: what a client needs to know before its first call — the version, whether
//! a language model is configured (and if not, how to configure one), and whether the server
//! requires an API token.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{extract::Json, state::AppState};
use crate::agent::model::CONFIGURE_HINT;
use crate::{http::guards::authorized::Authorized, http::guards::authorized::UseServer};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(server_info))
}

/// Answer of `GET /api/info`.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ServerInfo {
    /// Always `haico`.
    name: &'static str,
    /// The server's version.
    version: &'static str,
    /// The language model chat turns use.
    model: ModelInfo,
    /// Whether the API requires `Authorization: Bearer <token>` (`HAICO_API_TOKEN`).
    auth_required: bool,
}

/// The language model, as `GET /api/info` reports it.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ModelInfo {
    /// Whether a model is configured; without one every chat turn ends with an error.
    configured: bool,
    /// Provider, model and endpoint (never a key), or what is missing.
    description: String,
    /// How to configure a model; present only when none is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    hint: Option<String>,
}

/// The hint shown when no model is configured.
fn configure_hint() -> String {
    format!("To chat with the agent, {CONFIGURE_HINT}; then restart haico.")
}

#[utoipa::path(
    get,
    path = "/api/info",
    tag = "ui",
    summary = "The server's version, its language model and whether it requires a token",
    responses(
        UseServer,
        (status = 200, description = "What the server is and how it is set up", body = ServerInfo,
         example = json!({
             "name": "haico",
             "version": "0.1.0",
             "model": {"configured": true, "description": "OpenAI-compatible model `llama3.1` at http://localhost:11434/v1"},
             "auth_required": false,
         })),
    ),
)]
async fn server_info(Authorized(state, _): Authorized<UseServer>) -> Json<ServerInfo> {
    let agent = state.agent();
    let configured = agent.model_configured();
    Json(ServerInfo {
        name: "haico",
        version: env!("CARGO_PKG_VERSION"),
        model: ModelInfo {
            configured,
            description: agent.describe_model(),
            hint: (!configured).then(configure_hint),
        },
        auth_required: state.auth_required(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_names_every_setting() {
        let hint = configure_hint();
        for var in [
            "HAICO_LLM_PROVIDER",
            "HAICO_LLM_MODEL",
            "HAICO_LLM_API_KEY",
            "HAICO_LLM_BASE_URL",
        ] {
            assert!(hint.contains(var), "{hint}");
        }
    }
}
