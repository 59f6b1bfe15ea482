//! Markdown rendered to safe HTML for the web UI, with [`crate::markdown::to_safe_html`]:
//! `POST /api/markdown`, and the `?html=true` views that `GET …/document`, `GET …/workspace`
//! and `GET …/messages` answer.
//!
//! Rendering on the server keeps one Markdown dialect and one sanitiser for every client, and
//! keeps a Markdown library and an HTML sanitiser out of the page. Without `?html=true` the
//! views serialize exactly as `crate::wire`'s shapes do. Large inputs render on the blocking pool, so
//! a multi-megabyte document does not hold up a runtime worker (and the event streams on it),
//! and a render whose request goes away (the client hung up) stops at its next parser event.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::wire::{MessageRecord, TurnRecord};
use super::{error::ApiError, extract::Json, schema::BodyErrors, state::AppState};
use crate::{http::guards::authorized::Authorized, http::guards::authorized::UseServer};
use haico_core::{
    markdown::to_safe_html, markdown::to_safe_html_until, wire::ArtifactSummary, wire::Document,
    wire::PlanStep, wire::Preference,
};
use haico_store as store;
use haico_store::StoredTurn;

/// Markdown at least this long (in bytes, all inputs of one request together) renders on the
/// blocking pool; shorter inputs render in under a millisecond and stay inline. (About
/// 10 MB/s in a release build, most of it in the sanitiser: `cargo bench --bench markdown`.)
const INLINE_LIMIT: usize = 8 * 1024;

/// The role whose messages get `html`.
const ASSISTANT: &str = "assistant";

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(render_markdown))
}

/// `?html=true`: add the Markdown rendered to sanitised HTML.
#[derive(Debug, Clone, Copy, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct HtmlParam {
    /// Also answer `html`: the Markdown rendered and sanitised on the server, ready for
    /// `innerHTML`.
    #[serde(default)]
    #[param(default = false)]
    pub html: bool,
}

/// Body of `POST /api/markdown`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct MarkdownRequest {
    /// The Markdown to render.
    markdown: String,
}

/// Answer of `POST /api/markdown`.
#[derive(Debug, Serialize, ToSchema)]
struct MarkdownHtml {
    /// The rendered, sanitised HTML.
    html: String,
}

/// The document, with its rendered body when asked for.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct DocumentView {
    #[serde(flatten)]
    document: Document,
    /// `content` rendered to sanitised HTML; present only with `?html=true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    html: Option<String>,
}

/// The workspace snapshot, its document with `html` when asked for.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct WorkspaceView {
    /// The one-line objective, if set.
    objective: Option<String>,
    /// The document, if one exists.
    document: Option<DocumentView>,
    /// The plan, in order.
    #[serde(rename = "todos")]
    plan: Vec<PlanStep>,
    /// The preferences, in order.
    preferences: Vec<Preference>,
    /// Artifact index, newest first.
    artifacts: Vec<ArtifactSummary>,
    /// `direct` or `suggest` (issue 25).
    document_mode: String,
    /// The open suggestions, oldest first, each with its diff against this document.
    suggestions: Vec<haico_core::workspace::suggestions::SuggestionBody>,
}

impl DocumentView {
    fn new(document: Document, html: Option<String>) -> Self {
        Self { document, html }
    }
}

/// Sets its flag when dropped: with the request's future, when the client goes away.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Renders `inputs` (each to its HTML), off the runtime's workers when they are large, and
/// given up when this future is dropped.
async fn render_all(inputs: Vec<String>) -> Result<Vec<String>, ApiError> {
    let size: usize = inputs.iter().map(String::len).sum();
    if size < INLINE_LIMIT {
        return Ok(inputs.iter().map(|m| to_safe_html(m)).collect());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
    let render = move || {
        let stopped = || stop.load(Ordering::Relaxed);
        inputs
            .iter()
            .map(|m| to_safe_html_until(m, &stopped))
            .collect::<Result<Vec<_>, _>>()
    };
    let rendered = tokio::task::spawn_blocking(render).await.map_err(|err| {
        tracing::error!(error = %err, "rendering Markdown failed");
        ApiError::Internal("the Markdown could not be rendered".to_string())
    })?;
    // Only this future's drop stops a render, so a stopped one has nobody to answer.
    rendered.map_err(|cancelled| ApiError::Internal(cancelled.to_string()))
}

/// Renders one input.
async fn render_one(markdown: String) -> Result<String, ApiError> {
    Ok(render_all(vec![markdown]).await?.pop().unwrap_or_default())
}

/// The document view, rendered when `param` asks.
pub(super) async fn document_view(
    document: store::Document,
    param: HtmlParam,
) -> Result<DocumentView, ApiError> {
    let document = Document::from(document);
    let html = if param.html {
        Some(render_one(document.content.clone()).await?)
    } else {
        None
    };
    Ok(DocumentView::new(document, html))
}

/// The workspace view, its document rendered when `param` asks.
pub(super) async fn workspace_view(
    workspace: store::Workspace,
    suggestions: (
        haico_core::workspace::DocumentMode,
        Vec<haico_core::workspace::ListedSuggestion>,
    ),
    param: HtmlParam,
) -> Result<WorkspaceView, ApiError> {
    let store::Workspace {
        objective,
        document,
        plan,
        preferences,
        artifacts,
    } = workspace;
    let document = match document {
        Some(document) => Some(document_view(document, param).await?),
        None => None,
    };
    Ok(WorkspaceView {
        objective,
        document,
        plan: plan.into_iter().map(PlanStep::from).collect(),
        preferences: preferences.into_iter().map(Preference::from).collect(),
        artifacts: artifacts.into_iter().map(ArtifactSummary::from).collect(),
        document_mode: suggestions.0.as_str().to_string(),
        suggestions: suggestions
            .1
            .iter()
            .filter(|listed| {
                listed.suggestion.status == haico_core::workspace::SuggestionStatus::Open
            })
            .map(haico_core::workspace::suggestions::to_wire)
            .collect(),
    })
}

/// The conversation, the assistant's messages rendered (into their `html`) when `param` asks.
pub(super) async fn render_turns(
    turns: Vec<StoredTurn>,
    param: HtmlParam,
) -> Result<Vec<TurnRecord>, ApiError> {
    let mut turns: Vec<TurnRecord> = turns.into_iter().map(TurnRecord::from).collect();
    if !param.html {
        return Ok(turns);
    }
    let inputs = answers(&mut turns)
        .map(|message| message.content.clone())
        .collect();
    let rendered = render_all(inputs).await?;
    for (message, html) in answers(&mut turns).zip(rendered) {
        message.html = Some(html);
    }
    Ok(turns)
}

/// The assistant's messages of `turns`, in order.
fn answers(turns: &mut [TurnRecord]) -> impl Iterator<Item = &mut MessageRecord> {
    turns
        .iter_mut()
        .flat_map(|turn| &mut turn.messages)
        .filter(|message| message.role == ASSISTANT)
}

#[utoipa::path(
    post,
    path = "/api/markdown",
    tag = "ui",
    summary = "Render Markdown to sanitised HTML",
    description = "CommonMark with tables, strikethrough, task lists and footnotes, rendered and \
                   sanitised exactly as the `html` of `?html=true`: no scripts, styles, event \
                   handlers, frames or forms; links only to http(s) and mailto URLs (with \
                   `rel=\"noopener noreferrer\"`), images only from http(s) URLs.",
    request_body(content = MarkdownRequest, content_type = "application/json"),
    responses(
        UseServer,
        (status = 200, description = "The HTML", body = MarkdownHtml,
         example = json!({"html": "<p><strong>hi</strong></p>\n"})),
        BodyErrors,
    ),
)]
async fn render_markdown(
    _: Authorized<UseServer>,
    Json(body): Json<MarkdownRequest>,
) -> Result<Json<MarkdownHtml>, ApiError> {
    let html = render_one(body.markdown).await?;
    Ok(Json(MarkdownHtml { html }))
}
