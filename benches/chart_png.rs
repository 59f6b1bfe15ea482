//! Drawing a chart as PNG (`charts::png`): a typical bar chart (two series over six months,
//! axis titles, a legend), split into its parts: the SVG alone, the whole PNG (SVG, parsing,
//! text shaping with the embedded font, rasterising at 2×, encoding), and a 30-label line
//! chart as a busier case. Every chart.png request and every `chart_generator` call over MCP
//! pays the PNG time once, on the blocking pool.
//!
//! `cargo bench --bench chart_png`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{hint::black_box, time::Duration};

use criterion::{Criterion, criterion_group, criterion_main};
use haico::charts::{ChartData, ChartPayload, ChartStyle, ChartType, Series, png, svg};

fn chart(labels: usize, series: usize) -> ChartPayload {
    ChartPayload {
        title: "Visitors by month".to_string(),
        description: Some("Monthly visitors of the two sites.".to_string()),
        data: ChartData {
            labels: (0..labels).map(|i| format!("Month {}", i + 1)).collect(),
            series: (0..series)
                .map(|s| Series {
                    name: format!("Site {}", s + 1),
                    values: (0..labels)
                        .map(|i| 100.0 + ((i * 37 + s * 11) % 90) as f64)
                        .collect(),
                })
                .collect(),
        },
        x_axis_title: Some("Month".to_string()),
        y_axis_title: Some("Visitors".to_string()),
        style: ChartStyle::default(),
    }
}

fn chart_png(c: &mut Criterion) {
    let mut group = c.benchmark_group("chart_png");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    let bar = chart(6, 2);
    // The first drawing reads the fonts; a server pays that once.
    let first = png::render(ChartType::Bar, &bar).unwrap();
    eprintln!(
        "chart_png: a typical bar chart is {} bytes of PNG",
        first.len()
    );
    group.bench_function("bar/svg_only", |b| {
        b.iter(|| black_box(svg::render(ChartType::Bar, black_box(&bar))));
    });
    group.bench_function("bar/png", |b| {
        b.iter(|| black_box(png::render(ChartType::Bar, black_box(&bar)).unwrap()));
    });
    let line = chart(30, 3);
    group.bench_function("line_30_labels/png", |b| {
        b.iter(|| black_box(png::render(ChartType::Line, black_box(&line)).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, chart_png);
criterion_main!(benches);
