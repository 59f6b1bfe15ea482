//! Checks judged on the artifacts: how many there are, and charts that show what the person
//! gave (the type, the labels, the numbers, the number of series).

use super::*;

/// Two numbers are the same value when they differ by less than this share of the larger
/// (charts store what the model wrote as f64; 13.2 must match 13.2).
const TOLERANCE: f64 = 1e-6;

pub(super) fn artifacts_min(end: &Workspace, min: &ArtifactsMin) -> (bool, String) {
    let types: Vec<&str> = end
        .artifacts
        .iter()
        .map(|a| a.artifact_type.as_str())
        .collect();
    let all = if types.is_empty() {
        "none".to_string()
    } else {
        types.join(", ")
    };
    match min {
        ArtifactsMin::Count(count) => (
            types.len() >= *count,
            format!(
                "{}: {all} (at least {count} wanted)",
                plural(types.len(), "artifact")
            ),
        ),
        ArtifactsMin::OfType(typed) => {
            let matching = types.iter().filter(|t| **t == typed.artifact_type).count();
            (
                matching >= typed.count,
                format!(
                    "{matching} of type {} (at least {} wanted); all: {all}",
                    typed.artifact_type, typed.count
                ),
            )
        }
    }
}

/// What a chart artifact's payload holds (`data.labels`, `data.series[].values`), read
/// leniently: an artifact that is not a chart has no labels and no series.
struct ChartSeen<'a> {
    artifact: &'a Artifact,
    labels: Vec<String>,
    series: Vec<Vec<f64>>,
}

impl<'a> ChartSeen<'a> {
    fn of(artifact: &'a Artifact) -> Self {
        let data = &artifact.payload["data"];
        let labels = data["labels"]
            .as_array()
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let series = data["series"]
            .as_array()
            .map(|series| {
                series
                    .iter()
                    .map(|one| {
                        one["values"]
                            .as_array()
                            .map(|values| values.iter().filter_map(Value::as_f64).collect())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            artifact,
            labels,
            series,
        }
    }

    /// `#3 bar_chart "March and April"`.
    fn name(&self) -> String {
        let summary = &self.artifact.summary;
        format!(
            "#{} {} {}",
            summary.id,
            summary.artifact_type,
            quote(summary.title.as_deref().unwrap_or("untitled"))
        )
    }

    /// Why this chart is not the one `spec` wants; empty when it is.
    fn mismatches(&self, spec: &ChartSpec) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(wanted) = &spec.artifact_type
            && &self.artifact.summary.artifact_type != wanted
        {
            why.push(format!("not a {wanted}"));
        }
        if let Some(terms) = &spec.labels {
            let joined = normalize(&self.labels.join(" | "));
            let absent = missing(terms, &joined);
            if !absent.is_empty() {
                why.push(format!("no label has {}", absent.join(", ")));
            }
        }
        if let Some(values) = &spec.values {
            let absent: Vec<String> = values
                .iter()
                .filter(|wanted| {
                    !self
                        .series
                        .iter()
                        .flatten()
                        .any(|value| same_number(*value, **wanted))
                })
                .map(|value| value.to_string())
                .collect();
            if !absent.is_empty() {
                why.push(format!(
                    "lacks the value{} {}",
                    if absent.len() == 1 { "" } else { "s" },
                    absent.join(", ")
                ));
            }
        }
        if let Some(min) = spec.series_min
            && self.series.len() < min
        {
            why.push(format!(
                "has {} series (at least {min} wanted)",
                self.series.len()
            ));
        }
        why
    }
}

/// Whether two chart values are the same number, up to a tiny tolerance.
fn same_number(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1.0)
}

pub(super) fn chart(artifacts: &[Artifact], spec: &ChartSpec) -> (bool, String) {
    if artifacts.is_empty() {
        return (false, "there are no artifacts".into());
    }
    let mut near = Vec::new();
    for artifact in artifacts {
        let seen = ChartSeen::of(artifact);
        let why = seen.mismatches(spec);
        if why.is_empty() {
            return (
                true,
                format!(
                    "{}: {}, {} series",
                    seen.name(),
                    plural(seen.labels.len(), "label"),
                    seen.series.len()
                ),
            );
        }
        near.push(format!("{} {}", seen.name(), why.join(", ")));
    }
    (
        false,
        format!(
            "none of {} is the chart wanted: {}",
            plural(artifacts.len(), "artifact"),
            first_few(&near)
        ),
    )
}
