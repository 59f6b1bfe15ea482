//! Extractors that answer rejections in the API's own `{"error": …}` format.

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    response::{IntoResponse, Response},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::error::ApiError;

/// A JSON object body decoded into `T` (or a JSON response). A bad body is a 4xx with a JSON
/// error naming the field at fault, never axum's plain text; a body that is JSON but not an
/// object (an array, say) is refused rather than mapped onto the struct's fields by position.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<Value>::from_request(req, state).await?;
        if !value.is_object() {
            return Err(ApiError::Unprocessable(
                "the request body must be a JSON object".to_string(),
            ));
        }
        if let Some(path) = haico_core::workspace::rules::find_nul(&value) {
            return Err(haico_core::workspace::rules::nul_in(&path).into());
        }
        serde_path_to_error::deserialize(value)
            .map(Json)
            .map_err(|err| {
                let path = err.path().to_string();
                let reason = err.inner().to_string();
                if path == "." {
                    ApiError::Unprocessable(reason)
                } else {
                    ApiError::Unprocessable(format!("`{path}`: {reason}"))
                }
            })
    }
}

/// Any JSON body, passed on as it is (the tools endpoint hands it to the tool runtime, which
/// answers shape errors with a failure envelope, as the model would see them).
#[derive(Debug, Clone, Default)]
pub struct AnyJson(pub Value);

impl<S: Send + Sync> FromRequest<S> for AnyJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<Value>::from_request(req, state).await?;
        Ok(AnyJson(value))
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

/// Path parameters, rejected in the API's error format.
#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

/// A query string, rejected in the API's error format (400 with the reason).
#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(rejection: axum::extract::rejection::QueryRejection) -> Self {
        ApiError::BadRequest(rejection.body_text())
    }
}
