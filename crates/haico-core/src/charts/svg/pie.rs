//! Pie charts: one slice per label from the single series, clockwise from twelve o'clock, as a
//! ring with `style.donut`. Slices large enough carry their percentage; the legend lists every
//! label with its share. Negative or missing values count as 0.

use std::f64::consts::{FRAC_PI_2, TAU};

use super::{
    HEIGHT, MARGIN, Prepared, TITLE_BAND, WIDTH,
    escape::num,
    geometry::Rect,
    legend::{self, Item},
    value_text,
    writer::Svg,
};

/// Inner radius of a donut, as a share of the outer radius.
const DONUT_HOLE: f64 = 0.55;
/// Slices narrower than this angle (radians) carry no percentage label.
const MIN_LABELLED_SWEEP: f64 = 0.3;

/// Each slice's share of the whole (0 for negative or missing values); `None` when nothing is
/// positive.
pub fn shares(chart: &Prepared) -> Option<Vec<f64>> {
    let series = chart.series.first()?;
    let values: Vec<f64> = series
        .values
        .iter()
        .map(|v| v.filter(|v| *v > 0.0).unwrap_or(0.0))
        .collect();
    // Divide by the largest first, so that sums of huge values cannot overflow.
    let largest = values.iter().copied().fold(0.0, f64::max);
    if largest <= 0.0 {
        return None;
    }
    let scaled: Vec<f64> = values.iter().map(|v| v / largest).collect();
    let total: f64 = scaled.iter().sum();
    Some(scaled.iter().map(|v| v / total).collect())
}

/// Draws the pie; `false` when there is nothing positive to draw.
pub fn draw(svg: &mut Svg, chart: &Prepared) -> bool {
    let Some(shares) = shares(chart) else {
        return false;
    };
    let items: Vec<Item> = chart
        .labels
        .iter()
        .zip(&shares)
        .enumerate()
        .map(|(i, (label, share))| Item {
            label: format!("{label} ({})", percent(*share, 1)),
            color: chart.color(i),
        })
        .collect();
    let legend_w = if chart.show_legend {
        legend::width(items.iter().map(|item| item.label.as_str()))
    } else {
        0.0
    };
    let legend_room = if legend_w > 0.0 { legend_w + 16.0 } else { 0.0 };
    let area = Rect {
        x: MARGIN,
        y: TITLE_BAND,
        w: WIDTH - 2.0 * MARGIN - legend_room,
        h: HEIGHT - TITLE_BAND - MARGIN,
    };
    let (cx, cy) = (area.x + area.w / 2.0, area.y + area.h / 2.0);
    let radius = (area.w.min(area.h) / 2.0 - 4.0).max(10.0);
    let hole = if chart.donut {
        radius * DONUT_HOLE
    } else {
        0.0
    };
    let values = chart
        .series
        .first()
        .map(|s| s.values.as_slice())
        .unwrap_or_default();

    svg.open(
        "g",
        &[
            ("class", "slices"),
            ("stroke", "#ffffff"),
            ("stroke-width", "1"),
        ],
    );
    let mut angle = -FRAC_PI_2;
    let mut labels = Vec::new();
    for (i, share) in shares.iter().enumerate() {
        if *share <= 0.0 {
            continue;
        }
        let sweep = share * TAU;
        let path = if *share >= 1.0 - 1e-9 {
            full_ring(cx, cy, radius, hole)
        } else {
            slice(cx, cy, radius, hole, angle, angle + sweep)
        };
        let label = chart.labels.get(i).map(String::as_str).unwrap_or_default();
        let value = values.get(i).copied().flatten().unwrap_or_default();
        svg.with_tooltip(
            "path",
            &[
                ("d", &path),
                ("fill", &chart.color(i)),
                ("fill-rule", "evenodd"),
            ],
            &format!("{label}: {} ({})", value_text(value), percent(*share, 1)),
        );
        if sweep >= MIN_LABELLED_SWEEP {
            let middle = angle + sweep / 2.0;
            let at = if chart.donut {
                (radius + hole) / 2.0
            } else {
                radius * 0.65
            };
            labels.push((cx + at * middle.cos(), cy + at * middle.sin(), *share));
        }
        angle += sweep;
    }
    svg.close("g");

    svg.open(
        "g",
        &[
            ("class", "percentages"),
            ("font-size", "12"),
            ("font-weight", "600"),
            ("fill", "#ffffff"),
            ("text-anchor", "middle"),
        ],
    );
    for (x, y, share) in labels {
        svg.text(
            "text",
            &[("x", &num(x)), ("y", &num(y + 4.0))],
            &percent(share, 0),
        );
    }
    svg.close("g");

    if legend_w > 0.0 {
        let area = Rect {
            x: WIDTH - MARGIN - legend_w,
            y: TITLE_BAND,
            w: legend_w,
            h: HEIGHT - TITLE_BAND - MARGIN,
        };
        legend::draw(svg, area, &items);
    }
    true
}

/// "42%" or "42.0%".
fn percent(share: f64, decimals: usize) -> String {
    format!("{:.*}%", decimals, share * 100.0)
}

fn point(cx: f64, cy: f64, r: f64, angle: f64) -> String {
    format!(
        "{} {}",
        num(cx + r * angle.cos()),
        num(cy + r * angle.sin())
    )
}

/// A wedge (or, with a hole, a ring segment) from angle `a0` to `a1`, clockwise.
fn slice(cx: f64, cy: f64, r: f64, hole: f64, a0: f64, a1: f64) -> String {
    let large = if a1 - a0 > std::f64::consts::PI { 1 } else { 0 };
    let (r_text, hole_text) = (num(r), num(hole));
    if hole > 0.0 {
        format!(
            "M{} A{r_text} {r_text} 0 {large} 1 {} L{} A{hole_text} {hole_text} 0 {large} 0 {} Z",
            point(cx, cy, r, a0),
            point(cx, cy, r, a1),
            point(cx, cy, hole, a1),
            point(cx, cy, hole, a0),
        )
    } else {
        format!(
            "M{} {} L{} A{r_text} {r_text} 0 {large} 1 {} Z",
            num(cx),
            num(cy),
            point(cx, cy, r, a0),
            point(cx, cy, r, a1),
        )
    }
}

/// A whole disc (or ring): two half circles each, since one arc cannot close on itself.
fn full_ring(cx: f64, cy: f64, r: f64, hole: f64) -> String {
    let circle = |r: f64| {
        let rt = num(r);
        format!(
            "M{} {} A{rt} {rt} 0 1 1 {} {} A{rt} {rt} 0 1 1 {} {} Z",
            num(cx),
            num(cy - r),
            num(cx),
            num(cy + r),
            num(cx),
            num(cy - r),
        )
    };
    if hole > 0.0 {
        format!("{} {}", circle(r), circle(hole))
    } else {
        circle(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_use_the_large_arc_flag_past_half() {
        let small = slice(0.0, 0.0, 10.0, 0.0, 0.0, 1.0);
        assert!(small.contains(" 0 0 1 "), "{small}");
        let large = slice(0.0, 0.0, 10.0, 0.0, 0.0, 4.0);
        assert!(large.contains(" 0 1 1 "), "{large}");
        let ring = slice(0.0, 0.0, 10.0, 5.0, 0.0, 1.0);
        assert_eq!(ring.matches('A').count(), 2, "{ring}");
        assert_eq!(full_ring(0.0, 0.0, 10.0, 4.0).matches('M').count(), 2);
    }

    #[test]
    fn percentages_round_as_asked() {
        assert_eq!(percent(0.4234, 1), "42.3%");
        assert_eq!(percent(1.0 / 3.0, 0), "33%");
    }
}
