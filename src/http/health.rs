//! `GET /healthz`: is the server up and does the database answer?

use axum::{Router, extract::State, routing::get};
use serde_json::{Value, json};

use super::{AppState, error::ApiError, extract::Json};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz))
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Whether the server is up and its database answers",
    security(()),
    responses(
        (status = 200, description = "Up, and the database answers", body = Object,
         example = json!({"status": "ok"})),
        (status = 503, description = "The database does not answer", body = super::openapi::ErrorBody),
    ),
)]
async fn healthz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    state.db().ping().await?;
    Ok(Json(json!({"status": "ok"})))
}
