//! The artifact rules live in the workspace: a chart is checked by `ArtifactsEdit::add_chart` whichever
//! adapter asks (the tool gives the domain's text), MCP lists artifacts under the domain's
//! limits, and MCP draws a chart as PNG (beside the call's envelope, and as a resource) but
//! nothing else.

use crate::common;

use common::Harness;
use haico::{
    charts::{ChartData, ChartType, Series, model::ChartDraft},
    mcp::resources,
    mcp::tools::call_result,
    store::Artifact,
    workspace::{ArtifactQuery, INDEX_MAX, LIST_MAX, Source},
};
use rmcp::model::{ErrorCode, ResourceContents};
use serde_json::{Value, json};

/// A bar chart titled `title` with these labels and one series of these values.
fn draft(title: &str, labels: &[&str], values: &[f64]) -> ChartDraft {
    ChartDraft {
        chart_type: ChartType::Bar,
        title: title.to_string(),
        description: None,
        data: ChartData {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            series: vec![Series {
                name: "s".into(),
                values: values.to_vec(),
            }],
        },
        x_axis_title: None,
        y_axis_title: None,
        style: None,
    }
}

/// The same chart as the tool's arguments.
fn tool_args(title: &str, labels: &[&str], values: &[f64]) -> Value {
    json!({
        "chart_type": "bar",
        "title": title,
        "data": {"labels": labels, "series": [{"name": "s", "values": values}]},
        "action_and_reasoning": "Chart it.",
    })
}

/// Adds `n` artifacts straight through the store (the limits under test are about listing).
async fn bulk(h: &Harness, n: usize) {
    let mut repo = h.db().begin_write().await.unwrap();
    for i in 0..n {
        repo.artifacts()
            .add_artifact(
                &h.thread,
                "bar_chart",
                Some(&format!("Bulk {i}")),
                &json!({}),
                Some(0),
            )
            .await
            .unwrap()
            .expect("the thread exists");
    }
    repo.commit().await.unwrap();
}

backend_tests! {
    async fn a_chart_is_checked_by_the_workspace_whoever_asks(engine) {
        let h = Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();
        let bad = [
            (draft("T", &[], &[]), "`data.labels` is empty"),
            (draft("T", &["a", "b"], &[1.0]), "`data.series[0].values` has 1 values but there are 2 labels"),
            (draft("  ", &["a"], &[1.0]), "`title` must not be empty"),
        ];
        for (chart, expected) in bad {
            let before = h.state().await;
            // Straight on an edit: refused by the domain, nothing stored.
            let mut edit = workspaces.edit(&h.thread, Source::Agent).await.unwrap();
            let err = edit.artifacts().add_chart(chart.clone()).await.unwrap_err().to_string();
            edit.discard().await;
            assert!(err.contains(expected), "{err}");
            // Through the tool: the same text, as the envelope words a broken rule.
            let labels: Vec<&str> = chart.data.labels.iter().map(String::as_str).collect();
            let tool = h.fail("chart_generator", tool_args(&chart.title, &labels, &chart.data.series[0].values)).await;
            assert_eq!(tool, format!("invalid arguments: {err}"));
            assert_eq!(h.state().await, before, "nothing was stored");
        }

        // A good chart: stored with the thread's turn, trimmed as the check leaves it.
        let mut edit = workspaces.edit(&h.thread, Source::Agent).await.unwrap();
        let added = edit.artifacts().add_chart(draft("  Sales ", &["a"], &[1.0])).await.unwrap();
        edit.commit(Default::default()).await.unwrap();
        assert_eq!(added.chart.title, "Sales");
        assert_eq!(added.artifact.title.as_deref(), Some("Sales"));
        assert_eq!(added.artifact.artifact_type, "bar_chart");
        let mut repo = h.db().begin_read().await.unwrap();
        let stored: Artifact = repo.artifacts().get_artifact(&h.thread, added.artifact.artifact_id).await.unwrap().unwrap();
        repo.rollback().await.unwrap();
        assert_eq!(stored.payload, added.artifact.payload);
        assert_eq!(stored.payload["title"], json!("Sales"));
        h.cleanup().await;
    }

    async fn an_invalid_chart_is_refused_over_rest_with_the_domains_text(engine) {
        // REST has no chart route of its own; its tools endpoint is the REST way in.
        let (tdb, server) = common::server::setup(engine).await;
        server.create_thread("t").await;
        let before = server.workspace("t").await;
        let envelope = server.tool("t", "chart_generator", tool_args("T", &["a", "b"], &[1.0])).await;
        assert_eq!(envelope["success"], json!(false));
        assert_eq!(
            envelope["error"],
            json!("invalid arguments: `data.series[0].values` has 1 values but there are 2 labels: give exactly one value per label")
        );
        assert_eq!(server.workspace("t").await, before, "nothing was stored");
        let listed = server.get("/api/threads/t/artifacts").await.expect(200);
        assert_eq!(listed, json!([]));
        common::server::teardown(tdb, server).await;
    }

    async fn mcp_lists_artifacts_under_the_domains_limits(engine) {
        let h = Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();
        let total = usize::try_from(LIST_MAX).unwrap() + 3;
        bulk(&h, total).await;

        // resources/list names the newest INDEX_MAX one by one.
        let listed = resources::list(workspaces, &h.thread).await.unwrap();
        let named: Vec<&str> = listed
            .iter()
            .map(|r| r.uri.as_str())
            .filter(|uri| uri.contains("/artifacts/") && !uri.ends_with("chart.svg") && !uri.ends_with("chart.png"))
            .collect();
        assert_eq!(named.len(), usize::try_from(INDEX_MAX).unwrap());
        assert_eq!(ArtifactQuery::index().limit(), INDEX_MAX);

        // The artifacts panel resource shows the newest LIST_MAX, like the user path's largest page.
        let uri = format!("{}{}/artifacts", resources::URI_PREFIX, h.thread);
        let read = resources::read(workspaces, &h.thread, &uri).await.unwrap();
        let ResourceContents::TextResourceContents { text, .. } = read else {
            panic!("the artifacts panel is text");
        };
        let panel: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(panel.len(), usize::try_from(LIST_MAX).unwrap());
        assert_eq!(panel[0]["title"], json!(format!("Bulk {}", total - 1)));
        assert_eq!(ArtifactQuery::panel().limit(), LIST_MAX);

        // The prompt never lists more than the agent's own list.
        assert_eq!(ArtifactQuery::for_prompt(5).limit(), 5);
        assert_eq!(ArtifactQuery::for_prompt(usize::MAX).limit(), haico::workspace::AGENT_LIST_MAX);
        h.cleanup().await;
    }

    async fn mcp_draws_charts_as_png_and_nothing_else(engine) {
        use base64::Engine as _;
        let base64 = base64::engine::general_purpose::STANDARD;
        let h = Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();

        // A chart call's result: the envelope, then the chart as a PNG image.
        let call = h.call_full("chart_generator", tool_args("Sales", &["a", "b"], &[1.0, 2.0])).await;
        let id = call.artifact.as_ref().expect("a stored chart").artifact_id;
        let result = call_result(&call).await;
        assert_eq!(result.content.len(), 2, "{result:?}");
        assert!(result.content[0].as_text().is_some());
        let image = result.content[1].as_image().expect("an image block");
        assert_eq!(image.mime_type, "image/png");
        let png = base64.decode(&image.data).unwrap();
        assert_eq!(common::png_size(&png), (1600, 960));

        // Calls that make no chart, or fail, carry the envelope alone.
        for (tool, args) in [
            ("list_artifacts", json!({})),
            ("chart_generator", tool_args("T", &["a", "b"], &[1.0])),
        ] {
            let result = call_result(&h.call_full(tool, args).await).await;
            assert_eq!(result.content.len(), 1, "{tool}: {result:?}");
        }

        // The resource is the same image; the artifact's listing offers SVG and PNG.
        let uri = format!("{}{}/artifacts/{id}/chart.png", resources::URI_PREFIX, h.thread);
        let listed = resources::list(workspaces, &h.thread).await.unwrap();
        let entry = listed.iter().find(|r| r.uri == uri).expect("chart.png is listed");
        assert_eq!(entry.mime_type.as_deref(), Some("image/png"));
        let read = resources::read(workspaces, &h.thread, &uri).await.unwrap();
        let ResourceContents::BlobResourceContents { blob, mime_type, .. } = read else {
            panic!("a chart.png is a blob");
        };
        assert_eq!(mime_type.as_deref(), Some("image/png"));
        assert_eq!(base64.decode(blob).unwrap(), png);

        // Not a chart: "resource not found", as for chart.svg; nothing listed for it.
        let mut repo = h.db().begin_write().await.unwrap();
        let (note, _) = repo.artifacts().add_artifact(&h.thread, "note", Some("n"), &json!({"text": "hi"}), Some(0)).await.unwrap().expect("the thread exists");
        repo.commit().await.unwrap();
        let note_uri = format!("{}{}/artifacts/{note}/chart.png", resources::URI_PREFIX, h.thread);
        let err = resources::read(workspaces, &h.thread, &note_uri).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
        assert!(err.message.contains("not a chart") && err.message.contains("chart.png"), "{}", err.message);
        let listed = resources::list(workspaces, &h.thread).await.unwrap();
        assert!(!listed.iter().any(|r| r.uri == note_uri));
        let missing = format!("{}{}/artifacts/999999/chart.png", resources::URI_PREFIX, h.thread);
        let err = resources::read(workspaces, &h.thread, &missing).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
        h.cleanup().await;
    }
}
