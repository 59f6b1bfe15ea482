//! `GET /healthz`: is the server up and does the database answer?

use axum::{Router, extract::State, routing::get};
use serde_json::{Value, json};

use super::{AppState, error::ApiError, extract::Json};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz))
}

async fn healthz(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    state.db().ping().await?;
    Ok(Json(json!({"status": "ok"})))
}
