//! The chart renderer on its own: every chart kind renders well-formed, inert SVG with the
//! title, labels, legend and colours it was given; hostile text stays text.

use haico::{
    charts::svg::{PALETTE, RenderError, render, render_artifact},
    charts::{ChartPayload, ChartType},
};
use roxmltree::{Document, Node};
use serde_json::{Value, json};

fn payload(value: Value) -> ChartPayload {
    let mut value = value;
    let obj = value.as_object_mut().unwrap();
    for key in ["description", "x_axis_title", "y_axis_title"] {
        obj.entry(key).or_insert(Value::Null);
    }
    obj.entry("style").or_insert(json!({}));
    serde_json::from_value(value).unwrap()
}

fn draw(kind: ChartType, value: Value) -> String {
    render(kind, &payload(value))
}

/// Parses the SVG (failing the test when it is not well-formed XML) and checks it is inert.
#[track_caller]
fn parse(svg: &str) -> Document<'_> {
    let doc = Document::parse(svg).unwrap_or_else(|err| panic!("not well-formed: {err}\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.tag_name().namespace(),
        Some("http://www.w3.org/2000/svg")
    );
    assert_inert(&doc, svg);
    doc
}

#[track_caller]
fn assert_inert(doc: &Document<'_>, svg: &str) {
    assert!(!svg.to_ascii_lowercase().contains("<script"), "{svg}");
    for node in doc.descendants().filter(Node::is_element) {
        let name = node.tag_name().name();
        assert!(
            !matches!(
                name,
                "script" | "foreignObject" | "style" | "a" | "image" | "use"
            ),
            "unexpected <{name}>"
        );
        for attr in node.attributes() {
            let attr_name = attr.name().to_ascii_lowercase();
            assert!(
                !attr_name.starts_with("on"),
                "event handler attribute {attr_name}"
            );
            assert!(
                !attr_name.contains("href"),
                "reference attribute {attr_name}"
            );
            assert!(
                !attr.value().to_ascii_lowercase().contains("javascript:"),
                "{attr_name}={}",
                attr.value()
            );
        }
    }
}

/// Elements with this tag.
fn elements<'a, 'i>(doc: &'a Document<'i>, tag: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == tag)
        .collect()
}

/// The group `<g class="…">` with this class (the first one).
fn group<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Option<Node<'a, 'i>> {
    doc.descendants()
        .find(|n| n.tag_name().name() == "g" && n.attribute("class") == Some(class))
}

fn groups<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.tag_name().name() == "g" && n.attribute("class") == Some(class))
        .collect()
}

/// The visible text of every `<text>` (its first text node, without tooltips).
fn texts(doc: &Document<'_>) -> Vec<String> {
    elements(doc, "text")
        .iter()
        .map(|n| n.text().unwrap_or_default().to_string())
        .collect()
}

fn children<'a, 'i>(node: Node<'a, 'i>, tag: &str) -> Vec<Node<'a, 'i>> {
    node.children()
        .filter(|n| n.is_element() && n.tag_name().name() == tag)
        .collect()
}

fn attr_f64(node: Node<'_, '_>, name: &str) -> f64 {
    node.attribute(name)
        .unwrap_or_else(|| panic!("no {name} on {node:?}"))
        .parse()
        .unwrap()
}

fn sales() -> Value {
    json!({
        "title": "Quarterly sales",
        "description": "Two regions over four quarters",
        "data": {
            "labels": ["Q1", "Q2", "Q3", "Q4"],
            "series": [
                {"name": "North", "values": [10, 25, 18, 30]},
                {"name": "South", "values": [12, -5, 20, 8]}
            ]
        },
        "x_axis_title": "Quarter",
        "y_axis_title": "Revenue (kEUR)",
        "style": {"colors": ["#1f77b4", "tomato"]}
    })
}

#[test]
fn line_chart_has_title_axes_labels_legend_and_colours() {
    let svg = draw(ChartType::Line, sales());
    let doc = parse(&svg);
    let root = doc.root_element();
    let title = children(root, "title");
    assert_eq!(title[0].text(), Some("Quarterly sales"));
    assert_eq!(
        children(root, "desc")[0].text(),
        Some("Two regions over four quarters")
    );
    let shown = texts(&doc);
    for expected in [
        "Quarterly sales",
        "Q1",
        "Q2",
        "Q3",
        "Q4",
        "Quarter",
        "Revenue (kEUR)",
    ] {
        assert!(
            shown.iter().any(|t| t == expected),
            "{expected} missing in {shown:?}"
        );
    }
    // Tick labels include 0 (the data crosses it) and the zero line is drawn.
    assert!(shown.iter().any(|t| t == "0"), "{shown:?}");
    assert!(
        elements(&doc, "line")
            .iter()
            .any(|l| l.attribute("class") == Some("zero"))
    );
    // Grid: one line per y tick.
    let grid = group(&doc, "grid").expect("grid");
    let ticks = group(&doc, "y-ticks").expect("y ticks");
    assert_eq!(children(grid, "line").len(), children(ticks, "text").len());
    assert!(children(grid, "line").len() >= 3);
    // One path per series, in the given colours, straight segments.
    let paths: Vec<_> = elements(&doc, "path");
    assert_eq!(paths.len(), 2);
    assert_eq!(paths[0].attribute("stroke"), Some("#1f77b4"));
    assert_eq!(paths[1].attribute("stroke"), Some("tomato"));
    assert!(paths[0].attribute("d").unwrap().contains('L'));
    assert!(!paths[0].attribute("d").unwrap().contains('C'));
    // A marker per point, with a tooltip naming series, label and value.
    let markers = elements(&doc, "circle");
    assert_eq!(markers.len(), 8);
    let tips: Vec<&str> = markers
        .iter()
        .map(|m| children(*m, "title")[0].text().unwrap())
        .collect();
    assert!(tips.contains(&"South · Q2: -5"), "{tips:?}");
    // The legend (two series) names both with their colours.
    let legend = group(&doc, "legend").expect("legend shown for two series");
    let names: Vec<&str> = children(legend, "text")
        .iter()
        .map(|t| t.text().unwrap())
        .collect();
    assert_eq!(names, ["North", "South"]);
    let swatches: Vec<&str> = children(legend, "rect")
        .iter()
        .map(|r| r.attribute("fill").unwrap())
        .collect();
    assert_eq!(swatches, ["#1f77b4", "tomato"]);
}

#[test]
fn smooth_lines_are_cubic_curves() {
    let mut chart = sales();
    chart["style"] = json!({"smooth": true});
    let svg = draw(ChartType::Line, chart);
    let doc = parse(&svg);
    for path in elements(&doc, "path") {
        let d = path.attribute("d").unwrap();
        assert!(
            d.starts_with('M') && d.contains('C') && !d.contains('L'),
            "{d}"
        );
    }
    // Palette colours when none are given.
    let strokes: Vec<_> = elements(&doc, "path")
        .iter()
        .map(|p| p.attribute("stroke").unwrap().to_string())
        .collect();
    assert_eq!(strokes, [PALETTE[0], PALETTE[1]]);
}

#[test]
fn positive_lines_start_at_zero_and_flat_high_lines_hug_the_data() {
    let low = draw(
        ChartType::Line,
        json!({"title": "t", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [40, 100]}]}}),
    );
    let doc = parse(&low);
    let ticks = texts(&doc);
    assert!(ticks.iter().any(|t| t == "0"), "{ticks:?}");
    let high = draw(
        ChartType::Line,
        json!({"title": "t", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1000, 1010]}]}}),
    );
    let doc = parse(&high);
    let y_ticks: Vec<String> = children(group(&doc, "y-ticks").unwrap(), "text")
        .iter()
        .map(|t| t.text().unwrap().to_string())
        .collect();
    assert!(!y_ticks.contains(&"0".to_string()), "{y_ticks:?}");
    assert!(
        group(&doc, "legend").is_none(),
        "one series: no legend by default"
    );
}

fn bar_rects<'a, 'i>(doc: &'a Document<'i>) -> Vec<Vec<Node<'a, 'i>>> {
    groups(doc, "series")
        .into_iter()
        .map(|g| children(g, "rect"))
        .collect()
}

fn zero_y(doc: &Document<'_>) -> f64 {
    let zero = elements(doc, "line")
        .into_iter()
        .find(|l| l.attribute("class") == Some("zero"))
        .expect("zero line");
    attr_f64(zero, "y1")
}

#[test]
fn grouped_bars_grow_from_zero_both_ways() {
    let svg = draw(ChartType::Bar, sales());
    let doc = parse(&svg);
    let series = bar_rects(&doc);
    assert_eq!(series.len(), 2);
    assert_eq!(series[0].len(), 4);
    assert_eq!(series[1].len(), 4);
    let zero = zero_y(&doc);
    // North Q1 (positive) ends at the zero line; South Q2 (negative) starts there.
    let north_q1 = series[0][0];
    let bottom = attr_f64(north_q1, "y") + attr_f64(north_q1, "height");
    assert!((bottom - zero).abs() < 0.02, "{bottom} vs {zero}");
    let south_q2 = series[1][1];
    assert!((attr_f64(south_q2, "y") - zero).abs() < 0.02);
    // Side by side: South's bar is right of North's in the same band.
    assert!(attr_f64(series[1][0], "x") > attr_f64(series[0][0], "x"));
    // Colours come from the series groups.
    let fills: Vec<_> = groups(&doc, "series")
        .iter()
        .map(|g| g.attribute("fill").unwrap().to_string())
        .collect();
    assert_eq!(fills, ["#1f77b4", "tomato"]);
    let shown = texts(&doc);
    assert!(shown.iter().any(|t| t == "Revenue (kEUR)"));
}

#[test]
fn stacked_bars_sit_on_each_other() {
    let svg = draw(
        ChartType::Bar,
        json!({
            "title": "Stack",
            "data": {"labels": ["a", "b"], "series": [
                {"name": "x", "values": [10, -4]},
                {"name": "y", "values": [5, -6]}
            ]},
            "style": {"stacked": true, "show_legend": false}
        }),
    );
    let doc = parse(&svg);
    let series = bar_rects(&doc);
    let (x_a, y_a) = (series[0][0], series[1][0]);
    // Same column; y's bar ends where x's begins.
    assert_eq!(x_a.attribute("x"), y_a.attribute("x"));
    assert_eq!(x_a.attribute("width"), y_a.attribute("width"));
    let y_bottom = attr_f64(y_a, "y") + attr_f64(y_a, "height");
    assert!((y_bottom - attr_f64(x_a, "y")).abs() < 0.02);
    // Negative values stack downwards from zero.
    let (x_b, y_b) = (series[0][1], series[1][1]);
    let zero = zero_y(&doc);
    assert!((attr_f64(x_b, "y") - zero).abs() < 0.02);
    let x_b_bottom = attr_f64(x_b, "y") + attr_f64(x_b, "height");
    assert!((attr_f64(y_b, "y") - x_b_bottom).abs() < 0.02);
    // The axis reaches the stacked totals: 15 up, -10 down.
    let ticks: Vec<f64> = children(group(&doc, "y-ticks").unwrap(), "text")
        .iter()
        .map(|t| t.text().unwrap().parse().unwrap())
        .collect();
    assert!(
        ticks.first().unwrap() <= &-10.0 && ticks.last().unwrap() >= &15.0,
        "{ticks:?}"
    );
    assert!(
        group(&doc, "legend").is_none(),
        "show_legend false hides it"
    );
}

#[test]
fn pies_have_slices_percentages_and_a_legend() {
    let svg = draw(
        ChartType::Pie,
        json!({
            "title": "Budget split",
            "data": {"labels": ["Rent", "Food", "Fun", "Nothing"], "series": [{"name": "EUR", "values": [50, 30, 20, 0]}]},
            "style": {"colors": ["#112233", "rgb(10, 20, 30)"]}
        }),
    );
    let doc = parse(&svg);
    let slices = children(group(&doc, "slices").unwrap(), "path");
    assert_eq!(slices.len(), 3, "zero slices are not drawn");
    let fills: Vec<_> = slices
        .iter()
        .map(|s| s.attribute("fill").unwrap())
        .collect();
    assert_eq!(fills, ["#112233", "rgb(10, 20, 30)", PALETTE[2]]);
    let percentages: Vec<_> = children(group(&doc, "percentages").unwrap(), "text")
        .iter()
        .map(|t| t.text().unwrap().to_string())
        .collect();
    assert_eq!(percentages, ["50%", "30%", "20%"]);
    let legend: Vec<_> = children(group(&doc, "legend").expect("pies show a legend"), "text")
        .iter()
        .map(|t| t.text().unwrap().to_string())
        .collect();
    assert_eq!(
        legend,
        [
            "Rent (50.0%)",
            "Food (30.0%)",
            "Fun (20.0%)",
            "Nothing (0.0%)"
        ]
    );
    for slice in &slices {
        let d = slice.attribute("d").unwrap();
        assert_eq!(d.matches('A').count(), 1, "a wedge: {d}");
    }
}

#[test]
fn donuts_are_rings_and_a_single_slice_is_whole() {
    let svg = draw(
        ChartType::Pie,
        json!({
            "title": "Donut",
            "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 3]}]},
            "style": {"donut": true, "show_legend": false}
        }),
    );
    let doc = parse(&svg);
    let slices = children(group(&doc, "slices").unwrap(), "path");
    assert_eq!(slices.len(), 2);
    for slice in &slices {
        assert_eq!(slice.attribute("d").unwrap().matches('A').count(), 2);
    }
    assert!(group(&doc, "legend").is_none());

    let whole = draw(
        ChartType::Pie,
        json!({"title": "All", "data": {"labels": ["only"], "series": [{"name": "s", "values": [7]}]}}),
    );
    let doc = parse(&whole);
    let slices = children(group(&doc, "slices").unwrap(), "path");
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0].attribute("d").unwrap().matches('A').count(), 2);
    assert!(texts(&doc).contains(&"100%".to_string()));
}

#[test]
fn injection_attempts_render_as_inert_text() {
    let evil_title = "</text><script>alert(1)</script><text>";
    let evil_label = "<img src=x onerror=alert(2)> & \"quoted\" 'single'";
    let evil_series = "]]><!-- --><svg onload=alert(3)>";
    for kind in [ChartType::Line, ChartType::Bar, ChartType::Pie] {
        let series = if kind == ChartType::Pie {
            json!([{"name": evil_series, "values": [1, 2]}])
        } else {
            json!([{"name": evil_series, "values": [1, 2]}, {"name": "b&b", "values": [2, 1]}])
        };
        let svg = draw(
            kind,
            json!({
                "title": evil_title,
                "description": "<desc>&amp;</desc>",
                "data": {"labels": [evil_label, "ctl\u{1}\u{7}"], "series": series},
                "x_axis_title": "<x>",
                "y_axis_title": "&y;",
                "style": {"colors": [
                    "red\" onload=\"alert(4)",
                    "url(javascript:alert(5))",
                    "expression(alert(6))"
                ]}
            }),
        );
        let doc = parse(&svg);
        assert!(
            !svg.contains("<img") && !svg.contains("<svg onload"),
            "{svg}"
        );
        let root = doc.root_element();
        assert_eq!(children(root, "title")[0].text(), Some(evil_title));
        assert_eq!(children(root, "desc")[0].text(), Some("<desc>&amp;</desc>"));
        let shown = texts(&doc);
        assert!(shown.iter().any(|t| t == evil_title), "{shown:?}");
        // The label is shown whole or truncated, but always as text.
        let full_texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.is_text())
            .map(|n| n.text().unwrap().to_string())
            .collect();
        assert!(
            full_texts.iter().any(|t| t.contains(evil_label)),
            "{kind:?}: {full_texts:?}"
        );
        if kind != ChartType::Pie {
            // Series names show in tooltips and the legend (a pie's legend lists its labels).
            assert!(full_texts.iter().any(|t| t.contains(evil_series)));
        }
        // Control characters XML cannot carry were replaced.
        assert!(
            full_texts
                .iter()
                .any(|t| t.starts_with("ctl\u{FFFD}\u{FFFD}"))
        );
        // Invalid colours fell back to the palette.
        for node in doc.descendants().filter(Node::is_element) {
            for name in ["fill", "stroke"] {
                if let Some(value) = node.attribute(name) {
                    assert!(
                        !value.contains('(') || value.starts_with("rgb("),
                        "{name}={value}"
                    );
                    assert!(!value.contains('"') && !value.contains("alert"), "{value}");
                }
            }
        }
    }
}

#[test]
fn long_and_many_labels_are_rotated_truncated_and_thinned() {
    let labels: Vec<String> = (0..120)
        .map(|i| format!("A rather long category label number {i}"))
        .collect();
    let values: Vec<f64> = (0..120).map(|i| f64::from(i % 17) - 5.0).collect();
    let svg = draw(
        ChartType::Bar,
        json!({"title": "Many", "data": {"labels": labels, "series": [{"name": "s", "values": values}]}}),
    );
    let doc = parse(&svg);
    let shown = children(group(&doc, "x-labels").unwrap(), "text");
    assert!(
        shown.len() < 120 && shown.len() >= 20,
        "{} labels",
        shown.len()
    );
    for label in &shown {
        assert!(
            label
                .attribute("transform")
                .unwrap()
                .starts_with("rotate(-45")
        );
        let text = label.text().unwrap();
        assert!(text.chars().count() <= 18 && text.ends_with('…'), "{text}");
        // The full label is the tooltip.
        let tip = children(*label, "title")[0].text().unwrap();
        assert!(tip.starts_with("A rather long category label number"));
    }
    // Labels stay inside the canvas.
    for label in &shown {
        let x = attr_f64(*label, "x");
        assert!((0.0..=800.0).contains(&x));
    }
    // Short labels that fit stay horizontal.
    let svg = draw(ChartType::Bar, sales());
    let doc = parse(&svg);
    for label in children(group(&doc, "x-labels").unwrap(), "text") {
        assert!(label.attribute("transform").is_none());
    }
}

#[test]
fn long_titles_and_legend_names_are_truncated_with_a_tooltip() {
    let long = "Revenue ".repeat(30);
    let svg = draw(
        ChartType::Line,
        json!({"title": long, "data": {"labels": ["a"], "series": [
            {"name": long, "values": [1]}, {"name": "b", "values": [2]}
        ]}}),
    );
    let doc = parse(&svg);
    let title = elements(&doc, "text")
        .into_iter()
        .find(|t| t.attribute("class") == Some("title"))
        .unwrap();
    assert!(title.text().unwrap().ends_with('…'));
    assert_eq!(children(title, "title")[0].text(), Some(long.trim_end()));
    let legend = children(group(&doc, "legend").unwrap(), "text");
    assert!(legend[0].text().unwrap().ends_with('…'));
    assert!(legend[0].text().unwrap().chars().count() < 40);
}

#[test]
fn odd_payloads_still_render_well_formed() {
    let cases = [
        (
            ChartType::Line,
            json!({"title": "gaps", "data": {"labels": ["a", "b", "c", "d"], "series": [{"name": "s", "values": [1, 2]}]}}),
        ),
        (
            ChartType::Bar,
            json!({"title": "huge", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1e300, -1.7e308]}]}}),
        ),
        (
            ChartType::Line,
            json!({"title": "tiny", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1e-9, 3e-9]}]}}),
        ),
        (
            ChartType::Bar,
            json!({"title": "flat", "data": {"labels": ["a"], "series": [{"name": "s", "values": [0]}]}}),
        ),
        (
            ChartType::Pie,
            json!({"title": "nothing", "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [0, -3]}]}}),
        ),
        (
            ChartType::Bar,
            json!({"title": "no labels", "data": {"labels": [], "series": [{"name": "s", "values": []}]}}),
        ),
        (
            ChartType::Line,
            json!({"title": "no series", "data": {"labels": ["a"], "series": []}}),
        ),
        (
            ChartType::Pie,
            json!({"title": "many", "data": {"labels": (0..300).map(|i| format!("slice {i}")).collect::<Vec<_>>(), "series": [{"name": "s", "values": vec![1; 300]}]}}),
        ),
    ];
    for (kind, chart) in cases {
        let title = chart["title"].as_str().unwrap().to_string();
        let svg = draw(kind, chart);
        let doc = parse(&svg);
        for node in doc.descendants().filter(Node::is_element) {
            for attr in node.attributes() {
                assert!(
                    !attr.value().contains("NaN") && !attr.value().contains("inf"),
                    "{title}: {}={}",
                    attr.name(),
                    attr.value()
                );
            }
        }
        if matches!(title.as_str(), "nothing" | "no labels" | "no series") {
            assert!(
                texts(&doc).contains(&"No data to draw".to_string()),
                "{title}"
            );
        }
        if title == "many" {
            let legend = children(group(&doc, "legend").unwrap(), "text");
            assert!(legend.last().unwrap().text().unwrap().ends_with("more"));
        }
    }
}

#[test]
fn output_is_deterministic_and_artifacts_render_from_stored_json() {
    let chart = payload(sales());
    let stored = serde_json::to_value(&chart).unwrap();
    for kind in [ChartType::Line, ChartType::Bar] {
        let first = render(kind, &chart);
        assert_eq!(first, render(kind, &chart));
        assert_eq!(
            render_artifact(kind.artifact_type(), &stored).unwrap(),
            first
        );
    }
    assert_eq!(
        render_artifact("table", &stored),
        Err(RenderError::NotAChart("table".to_string()))
    );
    assert!(matches!(
        render_artifact("line_chart", &json!({"nope": 1})),
        Err(RenderError::InvalidPayload(_))
    ));
}
