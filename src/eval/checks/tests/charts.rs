//! `chart`.

use super::*;

fn chart(id: i64, artifact_type: &str, labels: &[&str], series: &[&[f64]]) -> Artifact {
    let series: Vec<Value> = series
        .iter()
        .enumerate()
        .map(|(i, values)| json!({"name": format!("s{i}"), "values": values}))
        .collect();
    Artifact {
        summary: ArtifactSummary {
            id,
            artifact_type: artifact_type.into(),
            title: Some(format!("Chart {id}")),
            turn_index: 1,
            created_at: Utc::now(),
        },
        payload: json!({"title": format!("Chart {id}"), "data": {"labels": labels, "series": series}}),
    }
}

fn on_artifacts(check: &str, artifacts: &[Artifact]) -> CheckOutcome {
    outcome_of(check, &workspace(), &workspace(), artifacts, &[], None)
}

#[test]
fn chart_matches_type_labels_values_and_series() {
    let labels = ["Rent", "Groceries", "Eating out"];
    let artifacts = [
        chart(1, "pie_chart", &labels, &[&[1150.0, 480.0, 240.0]]),
        chart(
            2,
            "line_chart",
            &["W1", "W2"],
            &[&[12.0, 15.0], &[12.0, 13.2]],
        ),
    ];
    let march = r#"{"chart": {"labels": ["rent", ["eating out", "restaurants"]],
                              "values": [1150, 480, 240]}}"#;
    let found = on_artifacts(march, &artifacts);
    assert!(found.passed, "{}", found.detail);
    assert!(
        found.detail.starts_with("#1 pie_chart \"Chart 1\""),
        "{}",
        found.detail
    );
    assert!(
        on_artifacts(
            r#"{"chart": {"type": "line_chart", "values": [13.2], "series_min": 2}}"#,
            &artifacts
        )
        .passed
    );
    let missed = on_artifacts(
        r#"{"chart": {"type": "bar_chart", "values": [520, 480]}}"#,
        &artifacts,
    );
    assert!(!missed.passed);
    assert!(
        missed
            .detail
            .contains("#1 pie_chart \"Chart 1\" not a bar_chart, lacks the value 520"),
        "{}",
        missed.detail
    );
    assert!(!on_artifacts(r#"{"chart": {"labels": ["savings"]}}"#, &artifacts).passed);
    assert!(!on_artifacts(r#"{"chart": {"series_min": 3}}"#, &artifacts).passed);
    let none = on_artifacts(r#"{"chart": {"series_min": 1}}"#, &[]);
    assert!(!none.passed);
    assert!(none.detail.contains("no artifacts"));
}
