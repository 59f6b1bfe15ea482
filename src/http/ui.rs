//! The web UI's shell: the static files in `ui/` at the top of the repository (HTML, CSS,
//! JavaScript modules, icons), served by the same server as the API.
//!
//! - `GET /` and `GET /t/{thread_id}` answer `index.html` (the page reads the thread id from
//!   its own URL, so a deep link works after a reload);
//! - `GET /studies` and `GET /studies/{study_id}` answer it too: the researcher's *Studies*
//!   page is a mode of the same page (it needs the same sign-in and token handling);
//! - `GET /s/{entry_key}` answers it for a study's participants (the page turns into the
//!   participant's consent → task → end screens), with `404` when no open or closed study has
//!   that link, so a mistyped link is visibly wrong even to a tool that only reads statuses;
//!   the page itself then says in words what to do;
//! - `GET /assets/{*path}` answers a file of the folder, with its content type by extension,
//!   or `404 {"error"}`.
//!
//! The files are embedded with `rust-embed`: a release build carries them in the binary, a
//! debug build reads them from the folder on every request, so editing the UI needs a browser
//! reload, not a recompile. Every answer has an `ETag` (the file's SHA-256) and
//! `Cache-Control: no-cache`, so browsers revalidate and get `304 Not Modified` while nothing
//! changed. Every answer, errors and `304`s included, carries the page's security headers:
//! a strict Content-Security-Policy ([`CONTENT_SECURITY_POLICY`]: scripts, styles and
//! connections to this origin only, no inline code), `X-Content-Type-Options: nosniff` and
//! `Referrer-Policy: no-referrer`.
//!
//! The shell needs no API token (the page asks for it): the auth middleware lets
//! [`ROUTES`] through, and everything the page then loads from `/api` is protected as usual.

use std::{borrow::Cow, fmt::Write as _};

use axum::{
    Router,
    body::Body,
    extract::{Path, State, rejection::PathRejection},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware,
    response::{IntoResponse, Response},
    routing::get,
};
use rust_embed::Embed;

use super::{error::ApiError, state::AppState};
use crate::studies::StudyError;

/// The folder, embedded in release builds and read from disk in debug builds.
#[derive(Embed)]
#[folder = "ui/"]
struct Assets;

/// The route templates of the shell: open without a token for `GET` (and `HEAD`).
pub const ROUTES: [&str; 6] = [
    "/",
    "/t/{thread_id}",
    "/assets/{*path}",
    "/studies",
    "/studies/{study_id}",
    "/s/{entry_key}",
];

/// The page's file.
const INDEX: &str = "index.html";

/// The policy of every UI answer: nothing but this origin's own files and API, no inline
/// scripts or styles, no plugins, no framing; images may also be `blob:`/`data:` URLs (chart
/// downloads, pasted images).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; font-src 'self'; \
object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The shell's routes; merged into [`super::app`].
pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(ROUTES[0], get(index))
        .route(ROUTES[1], get(index))
        .route(ROUTES[2], get(asset))
        .route(ROUTES[3], get(index))
        .route(ROUTES[4], get(index))
        .route(ROUTES[5], get(participant_page))
        .layer(middleware::map_response(security_headers))
}

/// Whether this build has the page (`ui/index.html`).
pub fn has_index() -> bool {
    Assets::get(INDEX).is_some()
}

/// `GET /`, `GET /t/{thread_id}` and the studies pages: the page.
async fn index(headers: HeaderMap) -> Response {
    serve(INDEX, &headers).unwrap_or_else(|| {
        ApiError::NotFound(
            "this build has no web UI (ui/index.html is missing); the API is under \
             /api"
                .to_string(),
        )
        .into_response()
    })
}

/// `GET /s/{entry_key}`: the page, for a study's participant. The status says whether the
/// link leads anywhere (`404` for an unknown or draft study, as its API answers); a closed
/// study's page is served as usual and says so itself (its API answers `410`). The page is
/// served whatever the answer, so a participant always reads what to do in words.
async fn participant_page(
    State(state): State<AppState>,
    entry_key: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let status = match entry_key {
        Ok(Path(key)) => match state.studies().check_entry(&key).await {
            Ok(()) | Err(StudyError::Closed) => StatusCode::OK,
            Err(StudyError::NotFound(_)) => StatusCode::NOT_FOUND,
            Err(err) => {
                // The database did not answer: the page still loads and its own request says
                // what went wrong.
                tracing::warn!(error = %err, "the study of a participant link could not be read");
                StatusCode::OK
            }
        },
        Err(_) => StatusCode::NOT_FOUND,
    };
    if status == StatusCode::OK {
        return index(headers).await;
    }
    // Not `304`: a page kept from another link must not stand in for this one's refusal.
    let mut response = index(HeaderMap::new()).await;
    if response.status() == StatusCode::OK {
        *response.status_mut() = status;
    }
    response
}

/// `GET /assets/{*path}`: one file.
async fn asset(path: Result<Path<String>, PathRejection>, headers: HeaderMap) -> Response {
    let path = match path {
        Ok(Path(path)) => path,
        Err(rejection) => return ApiError::from(rejection).into_response(),
    };
    let found = if is_plain(&path) {
        serve(&path, &headers)
    } else {
        None
    };
    found.unwrap_or_else(|| ApiError::NotFound(format!("no asset `{path}`")).into_response())
}

/// A relative path of plain segments: no `..`, `.`, empty or hidden segments, no
/// backslashes. (rust-embed refuses to leave its folder too; this keeps odd names from
/// reaching the file system at all.)
fn is_plain(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && !segment.starts_with('.'))
}

/// The file's answer, or `None` when there is no such file.
fn serve(path: &str, request: &HeaderMap) -> Option<Response> {
    let file = Assets::get(path)?;
    let etag = etag(&file.metadata.sha256_hash());
    let mut response = if matches_etag(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let body = match file.data {
            Cow::Borrowed(bytes) => Body::from(bytes),
            Cow::Owned(bytes) => Body::from(bytes),
        };
        let mut response = Response::new(body);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(path)),
        );
        response
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Some(response)
}

/// A strong entity tag from the file's SHA-256: `"<64 hex digits>"`.
fn etag(digest: &[u8; 32]) -> String {
    let mut tag = String::with_capacity(66);
    tag.push('"');
    for byte in digest {
        let _ = write!(tag, "{byte:02x}");
    }
    tag.push('"');
    tag
}

/// Whether `If-None-Match` names `etag` (or is `*`). Weak comparison, as RFC 9110 asks for
/// this header: a `W/` prefix is ignored.
fn matches_etag(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
        })
}

/// The content type of a file, by its extension.
fn content_type(path: &str) -> &'static str {
    let extension = path
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Adds the page's security headers to every answer of the shell.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("app.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("js/app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("icon.svg"), "image/svg+xml");
        assert_eq!(content_type("a.PNG"), "image/png");
        assert_eq!(content_type("data.json"), "application/json");
        assert_eq!(content_type("font.woff2"), "font/woff2");
        assert_eq!(content_type("blob.bin"), "application/octet-stream");
        assert_eq!(content_type("README"), "application/octet-stream");
    }

    #[test]
    fn only_plain_paths_are_looked_up() {
        assert!(is_plain("app.css"));
        assert!(is_plain("js/app.js"));
        for bad in [
            "",
            "../Cargo.toml",
            "js/../../x",
            "./app.css",
            "js//a.js",
            ".env",
            "a\\b",
        ] {
            assert!(!is_plain(bad), "{bad}");
        }
    }

    #[test]
    fn if_none_match_lists_and_weak_tags_match() {
        let tag = etag(&[0xab; 32]);
        assert_eq!(tag.len(), 66);
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::IF_NONE_MATCH, HeaderValue::from_static(value));
            headers
        };
        assert!(!matches_etag(&HeaderMap::new(), &tag));
        assert!(matches_etag(&with("*"), &tag));
        let listed: &'static str = Box::leak(format!("\"other\", W/{tag}").into_boxed_str());
        assert!(matches_etag(&with(listed), &tag));
        assert!(!matches_etag(&with("\"other\""), &tag));
    }
}
