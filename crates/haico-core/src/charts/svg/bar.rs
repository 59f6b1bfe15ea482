//! Bar charts: bars grow from the zero line (up for positive values, down for negative ones),
//! side by side per label, or stacked (`style.stacked`), where positive values stack upwards
//! from 0 and negative ones downwards.

use super::{
    Prepared,
    axes::Cartesian,
    escape::num,
    legend::{self, Item},
    value_text,
    writer::Svg,
};

/// Share of a label's band the bars use; the rest separates neighbouring labels.
const BAND_FILL: f64 = 0.8;
/// Bars get a hover text up to this many bars.
const MAX_TOOLTIPS: usize = 2_000;

/// The value domain: always includes 0; stacked bars count the sums of each label.
pub fn domain(chart: &Prepared) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    if chart.stacked {
        for i in 0..chart.labels.len() {
            let (up, down) = stack_totals(chart, i);
            (lo, hi) = (lo.min(down), hi.max(up));
        }
    } else {
        for v in chart.values() {
            (lo, hi) = (lo.min(v), hi.max(v));
        }
    }
    (lo, hi)
}

/// The sum of the positive and of the negative values of label `i`.
fn stack_totals(chart: &Prepared, i: usize) -> (f64, f64) {
    chart
        .series
        .iter()
        .filter_map(|s| s.values.get(i).copied().flatten())
        .fold((0.0, 0.0), |(up, down), v| {
            if v >= 0.0 {
                (up + v, down)
            } else {
                (up, down + v)
            }
        })
}

pub fn draw(svg: &mut Svg, chart: &Prepared) {
    let (lo, hi) = domain(chart);
    let frame = Cartesian::new(chart, lo, hi);
    frame.draw_background(svg, chart);
    let count = chart.series.len().max(1);
    let inner = frame.band * BAND_FILL;
    let bar_width = if chart.stacked {
        inner
    } else {
        inner / count as f64
    };
    // A hairline gap between grouped bars, when there is room for one.
    let drawn_width = if !chart.stacked && count > 1 && bar_width > 4.0 {
        bar_width - 1.0
    } else {
        bar_width
    };
    let tooltips = chart.labels.len() * count <= MAX_TOOLTIPS;
    let mut up = vec![0.0f64; chart.labels.len()];
    let mut down = vec![0.0f64; chart.labels.len()];
    for (j, series) in chart.series.iter().enumerate() {
        svg.open("g", &[("class", "series"), ("fill", &series.color)]);
        for (i, value) in series.values.iter().enumerate() {
            let Some(value) = *value else { continue };
            if value == 0.0 {
                continue;
            }
            let band_start = frame.x_center(i) - frame.band / 2.0;
            let mut x = band_start + (frame.band - inner) / 2.0;
            let (from, to) = if chart.stacked {
                let base = if value >= 0.0 { &mut up } else { &mut down };
                let Some(slot) = base.get_mut(i) else {
                    continue;
                };
                let from = *slot;
                *slot += value;
                (from, *slot)
            } else {
                x += j as f64 * bar_width;
                (0.0, value)
            };
            let (y_from, y_to) = (frame.scale.y(from), frame.scale.y(to));
            let attrs = [
                ("x", num(x)),
                ("y", num(y_from.min(y_to))),
                ("width", num(drawn_width)),
                ("height", num((y_from - y_to).abs())),
            ];
            let attrs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            if tooltips {
                let label = chart.labels.get(i).map(String::as_str).unwrap_or_default();
                svg.with_tooltip(
                    "rect",
                    &attrs,
                    &format!("{} · {label}: {}", series.name, value_text(value)),
                );
            } else {
                svg.empty("rect", &attrs);
            }
        }
        svg.close("g");
    }
    frame.draw_axes(svg);
    if let Some(area) = frame.legend {
        let items: Vec<Item> = chart
            .series
            .iter()
            .map(|s| Item {
                label: s.name.clone(),
                color: s.color.clone(),
            })
            .collect();
        legend::draw(svg, area, &items);
    }
}
