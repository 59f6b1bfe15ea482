//! The workspace as MCP resources.
//!
//! | URI | content |
//! | --- | --- |
//! | `haico://thread/{thread_id}/objective` | `{"objective": text or null}` |
//! | `haico://thread/{thread_id}/document` | `{"title", "content", "version"}` (version 0: none yet) |
//! | `haico://thread/{thread_id}/plan` | `[{"id", "text", "depth", "done"}]` |
//! | `haico://thread/{thread_id}/preferences` | `[{"id", "title", "subtitle", "kind", "locked"}]` |
//! | `haico://thread/{thread_id}/artifacts` | `[{"id", "artifact_type", "title", "turn_index", "created_at"}]`, the newest [`LIST_MAX`](crate::workspace::LIST_MAX) |
//! | `haico://thread/{thread_id}/artifacts/{artifact_id}` | the artifact with its `payload` |
//! | `haico://thread/{thread_id}/artifacts/{artifact_id}/chart.svg` | a chart drawn as `image/svg+xml` (base64 blob) |
//! | `haico://thread/{thread_id}/artifacts/{artifact_id}/chart.png` | the same chart as `image/png` (base64 blob, 1600×960) |
//! | `haico://thread/{thread_id}/history` | the newest revisions, as `GET …/history?limit=500` |
//! | `haico://thread/{thread_id}/revisions/{rev}` | the workspace right after revision `rev`, as `GET …/workspace?at=` |
//!
//! The JSON shapes are those of the REST API. The five panel resources and the history are the
//! ones that change (and are announced with `notifications/resources/updated`); an artifact or
//! a past revision never changes.

use base64::Engine;
use rmcp::model::{ErrorData, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use haico_store::{Artifact, ThreadId, panels::Panel};

use haico_core::{
    charts::png, charts::png::PngError, charts::svg, charts::svg::RenderError, wire,
    workspace::ArtifactQuery, workspace::View, workspace::WorkspaceError, workspace::Workspaces,
    workspace::empty_document,
};

/// Every haico resource URI starts with this, followed by the thread id.
pub const URI_PREFIX: &str = "haico://thread/";
/// The MIME type of the JSON resources.
pub const JSON_MIME: &str = "application/json";
/// The MIME type of a drawn chart.
pub const SVG_MIME: &str = "image/svg+xml";
/// The MIME type of a chart drawn as a bitmap.
pub const PNG_MIME: &str = png::MIME;

/// What a haico resource URI points at, within its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A whole panel.
    Panel(Panel),
    /// One artifact, as JSON.
    Artifact(i64),
    /// One chart artifact, drawn as SVG.
    ChartSvg(i64),
    /// One chart artifact, drawn as PNG.
    ChartPng(i64),
    /// The thread's history (the newest revisions).
    History,
    /// The workspace as it stood right after a revision.
    Revision(i64),
}

/// A parsed haico resource URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUri {
    /// The thread it belongs to.
    pub thread: ThreadId,
    /// What in the thread.
    pub target: Target,
}

impl ResourceUri {
    /// Parses `haico://thread/{thread_id}/…`; anything else is `None`.
    pub fn parse(uri: &str) -> Option<Self> {
        let rest = uri.strip_prefix(URI_PREFIX)?;
        let (thread, path) = rest.split_once('/')?;
        let thread = ThreadId::parse(thread).ok()?;
        let target = match path.split('/').collect::<Vec<_>>().as_slice() {
            ["artifacts", id] => Target::Artifact(parse_id(id)?),
            ["artifacts", id, "chart.svg"] => Target::ChartSvg(parse_id(id)?),
            ["artifacts", id, "chart.png"] => Target::ChartPng(parse_id(id)?),
            ["history"] => Target::History,
            ["revisions", "0"] => Target::Revision(0),
            ["revisions", rev] => Target::Revision(parse_id(rev)?),
            [panel] => Target::Panel(Panel::ALL.into_iter().find(|p| p.as_str() == *panel)?),
            _ => return None,
        };
        Some(Self { thread, target })
    }

    /// The URI text.
    pub fn to_uri(&self) -> String {
        match self.target {
            Target::Panel(panel) => panel_uri(&self.thread, panel),
            Target::Artifact(id) => format!("{URI_PREFIX}{}/artifacts/{id}", self.thread),
            Target::ChartSvg(id) => format!("{URI_PREFIX}{}/artifacts/{id}/chart.svg", self.thread),
            Target::ChartPng(id) => format!("{URI_PREFIX}{}/artifacts/{id}/chart.png", self.thread),
            Target::History => history_uri(&self.thread),
            Target::Revision(rev) => format!("{URI_PREFIX}{}/revisions/{rev}", self.thread),
        }
    }
}

/// Artifact ids are positive integers written plainly (no sign, no leading zeros).
fn parse_id(raw: &str) -> Option<i64> {
    let id: i64 = raw.parse().ok()?;
    (id > 0 && id.to_string() == raw).then_some(id)
}

/// The URI of the history of `thread`.
pub fn history_uri(thread: &ThreadId) -> String {
    format!("{URI_PREFIX}{thread}/history")
}

/// The URI of a panel of `thread`.
pub fn panel_uri(thread: &ThreadId, panel: Panel) -> String {
    format!("{URI_PREFIX}{thread}/{}", panel.as_str())
}

fn panel_description(panel: Panel) -> (&'static str, &'static str) {
    match panel {
        Panel::Objective => ("Objective", "The one-line objective of the work."),
        Panel::Document => (
            "Document",
            "The co-edited working document: title, Markdown content and version.",
        ),
        Panel::Plan => (
            "Plan",
            "The plan as an ordered outline of steps (text, depth, done); tools address steps \
             by their 1-based position in this list.",
        ),
        Panel::Preferences => (
            "Preferences",
            "The person's constraints (hard or soft); locked ones can only be changed by the \
             person. Tools address them by their 1-based position in this list.",
        ),
        Panel::Artifacts => (
            "Artifacts",
            "Index of the charts and other outputs made in this thread, newest first.",
        ),
        Panel::Suggestions => (
            "Suggestions",
            "The document mode (direct or suggest) and every suggestion the agent made, with \
             its status, edits, reason and its diff against the document as it is now.",
        ),
    }
}

/// The resources of a thread: its five panels, then its newest artifacts (charts also as SVG
/// and PNG).
pub async fn list(
    workspaces: &Workspaces,
    thread: &ThreadId,
) -> Result<Vec<Resource>, WorkspaceError> {
    let mut resources: Vec<Resource> = Panel::ALL
        .into_iter()
        .map(|panel| {
            let (title, description) = panel_description(panel);
            Resource::new(panel_uri(thread, panel), panel.as_str())
                .with_title(title)
                .with_description(description)
                .with_mime_type(JSON_MIME)
        })
        .collect();
    resources.push(
        Resource::new(history_uri(thread), "history")
            .with_title("History")
            .with_description(
                "Every change of the workspace as a numbered revision, newest first: who made \
                 it (agent or person), in which turn, with which tool and why, and what it \
                 changed. Read a revision's workspace at revisions/{rev}.",
            )
            .with_mime_type(JSON_MIME),
    );
    // The newest ones one by one (the domain's index limit); older ones stay readable
    // through the templates.
    let newest = ArtifactQuery::index();
    let artifacts = workspaces.artifacts(thread).list(&newest).await?;
    for artifact in artifacts {
        let label = artifact
            .title
            .clone()
            .unwrap_or_else(|| artifact.artifact_type.clone());
        let uri = |target| {
            ResourceUri {
                thread: thread.clone(),
                target,
            }
            .to_uri()
        };
        resources.push(
            Resource::new(
                uri(Target::Artifact(artifact.id)),
                format!("artifact-{}", artifact.id),
            )
            .with_title(format!("{label} ({})", artifact.artifact_type))
            .with_description(format!(
                "Artifact {} made in turn {}, with its payload.",
                artifact.id, artifact.turn_index
            ))
            .with_mime_type(JSON_MIME),
        );
        if svg::chart_type_of(&artifact.artifact_type).is_some() {
            resources.push(
                Resource::new(
                    uri(Target::ChartSvg(artifact.id)),
                    format!("chart-{}.svg", artifact.id),
                )
                .with_title(format!("{label} (drawn)"))
                .with_description(format!("Chart {} drawn as an SVG image.", artifact.id))
                .with_mime_type(SVG_MIME),
            );
            resources.push(
                Resource::new(
                    uri(Target::ChartPng(artifact.id)),
                    format!("chart-{}.png", artifact.id),
                )
                .with_title(format!("{label} (drawn, PNG)"))
                .with_description(format!(
                    "Chart {} drawn as a {}×{} PNG image.",
                    artifact.id,
                    png::WIDTH,
                    png::HEIGHT
                ))
                .with_mime_type(PNG_MIME),
            );
        }
    }
    Ok(resources)
}

/// The templates for a thread's artifacts.
pub fn templates(thread: &ThreadId) -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            format!("{URI_PREFIX}{thread}/artifacts/{{artifact_id}}"),
            "artifact",
        )
        .with_title("Artifact")
        .with_description("One artifact of this thread, with its payload.")
        .with_mime_type(JSON_MIME),
        ResourceTemplate::new(
            format!("{URI_PREFIX}{thread}/artifacts/{{artifact_id}}/chart.svg"),
            "chart-svg",
        )
        .with_title("Chart image")
        .with_description("A chart artifact of this thread drawn as an SVG image.")
        .with_mime_type(SVG_MIME),
        ResourceTemplate::new(
            format!("{URI_PREFIX}{thread}/artifacts/{{artifact_id}}/chart.png"),
            "chart-png",
        )
        .with_title("Chart image (PNG)")
        .with_description(format!(
            "A chart artifact of this thread drawn as a {}×{} PNG image.",
            png::WIDTH,
            png::HEIGHT
        ))
        .with_mime_type(PNG_MIME),
        ResourceTemplate::new(
            format!("{URI_PREFIX}{thread}/revisions/{{rev}}"),
            "revision",
        )
        .with_title("The workspace at a revision")
        .with_description(
            "The workspace exactly as it stood right after revision `rev` (0: empty).",
        )
        .with_mime_type(JSON_MIME),
    ]
}

/// Reads a resource of `thread`. Unknown URIs, other threads' URIs and missing artifacts are
/// "resource not found".
pub async fn read(
    workspaces: &Workspaces,
    thread: &ThreadId,
    uri: &str,
) -> Result<ResourceContents, ErrorData> {
    let parsed = ResourceUri::parse(uri)
        .filter(|parsed| parsed.thread == *thread)
        .ok_or_else(|| not_found(uri, thread))?;
    let failed = |err: WorkspaceError| match err {
        WorkspaceError::UnknownThread(_) | WorkspaceError::NotFound(_) => not_found(uri, thread),
        other => storage_error(other),
    };
    let mut view = workspaces.view(thread).await.map_err(failed)?;
    let found = read_in(&mut view, &parsed, uri).await.map_err(failed);
    view.close().await;
    match found?? {
        Found::Contents(contents) => Ok(contents),
        // Drawn once the view is closed: no transaction stays open while the image is made.
        Found::ChartPng(artifact) => {
            let id = artifact.summary.id;
            png::render_artifact(&artifact.summary.artifact_type, &artifact.payload)
                .await
                .map(|bytes| chart_blob(&bytes, uri, PNG_MIME))
                .map_err(|err| undrawable(id, "chart.png", uri, err))
        }
    }
}

/// What a read found in its view.
enum Found {
    /// The resource's contents, ready.
    Contents(ResourceContents),
    /// A chart artifact to draw as PNG.
    ChartPng(Artifact),
}

/// Reads one parsed resource in `view`.
async fn read_in(
    view: &mut View,
    parsed: &ResourceUri,
    uri: &str,
) -> Result<Result<Found, ErrorData>, WorkspaceError> {
    Ok(Ok(Found::Contents(match parsed.target {
        Target::Panel(panel) => {
            let value = match panel {
                Panel::Objective => json!({ "objective": view.objective().await? }),
                Panel::Document => to_json(&wire::Document::from(
                    view.document().await?.unwrap_or_else(empty_document),
                )),
                Panel::Plan => to_json(&wire::list::<_, wire::PlanStep>(view.plan().await?)),
                Panel::Preferences => to_json(&wire::list::<_, wire::Preference>(
                    view.preferences().await?,
                )),
                Panel::Artifacts => to_json(&wire::list::<_, wire::ArtifactSummary>(
                    view.artifacts(&ArtifactQuery::panel()).await?,
                )),
                Panel::Suggestions => {
                    let mode = view.document_mode().await?;
                    let listed = view.suggestions(None).await?;
                    json!({
                        "document_mode": mode.as_str(),
                        "suggestions": listed.iter().map(haico_core::workspace::suggestions::to_wire)
                            .collect::<Vec<_>>(),
                    })
                }
            };
            ResourceContents::text(value.to_string(), uri).with_mime_type(JSON_MIME)
        }
        Target::History => ResourceContents::text(
            to_json(
                &view
                    .history(None, Some(haico_core::workspace::history::HISTORY_MAX))
                    .await?,
            )
            .to_string(),
            uri,
        )
        .with_mime_type(JSON_MIME),
        Target::Revision(rev) => {
            let snapshot = wire::Workspace::from(view.snapshot_at(rev).await?);
            ResourceContents::text(to_json(&snapshot).to_string(), uri).with_mime_type(JSON_MIME)
        }
        Target::Artifact(id) => {
            let artifact = view.artifact(id).await?;
            ResourceContents::text(to_json(&wire::Artifact::from(artifact)).to_string(), uri)
                .with_mime_type(JSON_MIME)
        }
        Target::ChartSvg(id) => {
            let artifact = view.artifact(id).await?;
            let drawn = svg::render_artifact(&artifact.summary.artifact_type, &artifact.payload)
                .map(String::into_bytes)
                .map_err(PngError::from);
            match drawn {
                Ok(bytes) => chart_blob(&bytes, uri, SVG_MIME),
                Err(err) => return Ok(Err(undrawable(id, "chart.svg", uri, err))),
            }
        }
        Target::ChartPng(id) => return Ok(Ok(Found::ChartPng(view.artifact(id).await?))),
    })))
}

/// A drawn chart as a base64 blob.
fn chart_blob(bytes: &[u8], uri: &str, mime: &str) -> ResourceContents {
    ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
        .with_mime_type(mime)
}

/// Why artifact `id` has no `file` (`chart.svg`, `chart.png`): not a chart is "resource not
/// found"; a chart that cannot be drawn is an internal error, logged.
fn undrawable(id: i64, file: &str, uri: &str, err: PngError) -> ErrorData {
    match err {
        PngError::Render(RenderError::NotAChart(kind)) => ErrorData::resource_not_found(
            format!("artifact {id} is a `{kind}`, not a chart: it has no {file}"),
            Some(json!({ "uri": uri })),
        ),
        PngError::Render(RenderError::InvalidPayload(reason)) => {
            ErrorData::internal_error(format!("artifact {id} cannot be drawn: {reason}"), None)
        }
        other => {
            tracing::error!(artifact_id = id, error = %other, "a chart could not be drawn");
            ErrorData::internal_error(format!("artifact {id} could not be drawn as {file}"), None)
        }
    }
}

/// Whether `uri` names a resource of `thread` that can exist (panels always do; artifacts are
/// checked when read).
pub fn belongs_to(uri: &str, thread: &ThreadId) -> bool {
    ResourceUri::parse(uri).is_some_and(|parsed| parsed.thread == *thread)
}

/// The MCP "resource not found" error for `uri`.
pub fn not_found(uri: &str, thread: &ThreadId) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "no resource {uri:?} in this session: its resources are {URI_PREFIX}{thread}/\
             {{objective,document,plan,preferences,artifacts,history}}, \
             {URI_PREFIX}{thread}/artifacts/{{artifact_id}}[/chart.svg|/chart.png] and \
             {URI_PREFIX}{thread}/revisions/{{rev}}"
        ),
        Some(json!({ "uri": uri })),
    )
}

/// A storage failure, reported without internals (the details go to the log).
pub fn storage_error(err: WorkspaceError) -> ErrorData {
    tracing::error!(error = %err, "reading the workspace failed");
    ErrorData::internal_error("the workspace could not be read; try again", None)
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_reject_strangers() {
        let thread = ThreadId::parse("t-1").unwrap_or_else(|_| unreachable!());
        for target in [
            Target::Panel(Panel::Plan),
            Target::Artifact(7),
            Target::ChartSvg(12),
            Target::ChartPng(13),
            Target::History,
            Target::Revision(0),
            Target::Revision(31),
        ] {
            let uri = ResourceUri {
                thread: thread.clone(),
                target,
            };
            assert_eq!(ResourceUri::parse(&uri.to_uri()), Some(uri));
        }
        for bad in [
            "haico://thread/t-1/plans",
            "haico://thread/t-1/artifacts/0",
            "haico://thread/t-1/artifacts/007",
            "haico://thread/t-1/artifacts/-3",
            "haico://thread/t 1/plan",
            "haico://thread/t-1",
            "haico://thread/t-1/plan/x",
            "haico://thread/t-1/revisions/-1",
            "haico://thread/t-1/revisions/01",
            "file:///etc/passwd",
        ] {
            assert_eq!(ResourceUri::parse(bad), None, "{bad}");
        }
    }
}
