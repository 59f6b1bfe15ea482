//! `GET /healthz`: is the server up and does the database answer?

use axum::extract::State;
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{error::ApiError, extract::Json, schema::ErrorBody, state::AppState};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz))
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
        (status = 503, description = "The database does not answer", body = ErrorBody),
    ),
)]
async fn healthz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    state.db().ping().await?;
    Ok(Json(json!({"status": "ok"})))
}
