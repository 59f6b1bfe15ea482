//! Line charts: one path per series over the category axis, straight or smooth (Catmull-Rom
//! turned into cubic Béziers), with a marker and tooltip per point.
//!
//! The value axis includes 0 when the data already crosses it or when leaving it out would
//! not gain much (the data's distance from 0 is at most its own span); otherwise it hugs the
//! data so that small changes on a large level stay visible. When 0 is inside, the zero line
//! is drawn.

use super::{
    Prepared, SeriesView,
    axes::Cartesian,
    escape::num,
    legend::{self, Item},
    value_text,
    writer::Svg,
};

/// Markers are drawn for every point up to this many labels (isolated points always).
const MAX_MARKED_LABELS: usize = 60;

/// The value domain of a line chart (see the module doc).
pub fn domain(chart: &Prepared) -> (f64, f64) {
    let (min, max) = chart
        .values()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !min.is_finite() || !max.is_finite() {
        return (0.0, 1.0);
    }
    let span = max / 2.0 - min / 2.0;
    if min > 0.0 && min / 2.0 <= span {
        (0.0, max)
    } else if max < 0.0 && -max / 2.0 <= span {
        (min, 0.0)
    } else {
        (min, max)
    }
}

pub fn draw(svg: &mut Svg, chart: &Prepared) {
    let (lo, hi) = domain(chart);
    let frame = Cartesian::new(chart, lo, hi);
    frame.draw_background(svg, chart);
    let (top, bottom) = (frame.plot.y, frame.plot.bottom());
    for series in &chart.series {
        let points: Vec<Option<(f64, f64)>> = series
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| v.map(|v| (frame.x_center(i), frame.scale.y(v))))
            .collect();
        let runs = runs(&points);
        let mut path = String::new();
        for run in runs.iter().filter(|run| run.len() >= 2) {
            if chart.smooth {
                smooth_path(&mut path, run, top, bottom);
            } else {
                straight_path(&mut path, run);
            }
        }
        svg.open("g", &[("class", "series"), ("fill", &series.color)]);
        if !path.is_empty() {
            svg.empty(
                "path",
                &[
                    ("d", path.trim_end()),
                    ("fill", "none"),
                    ("stroke", &series.color),
                    ("stroke-width", "2"),
                    ("stroke-linejoin", "round"),
                    ("stroke-linecap", "round"),
                ],
            );
        }
        draw_markers(svg, chart, series, &points);
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

fn draw_markers(
    svg: &mut Svg,
    chart: &Prepared,
    series: &SeriesView,
    points: &[Option<(f64, f64)>],
) {
    let all = chart.labels.len() <= MAX_MARKED_LABELS;
    let present = |j: Option<usize>| j.and_then(|j| points.get(j)).is_some_and(Option::is_some);
    for (i, point) in points.iter().enumerate() {
        let Some((x, y)) = point else { continue };
        // A point with no line through it always gets a marker, or it would not show.
        let isolated = !present(i.checked_sub(1)) && !present(Some(i + 1));
        if !all && !isolated {
            continue;
        }
        let value = series.values.get(i).copied().flatten().unwrap_or_default();
        let label = chart.labels.get(i).map(String::as_str).unwrap_or_default();
        svg.with_tooltip(
            "circle",
            &[("cx", &num(*x)), ("cy", &num(*y)), ("r", "3")],
            &format!("{} · {label}: {}", series.name, value_text(value)),
        );
    }
}

/// The contiguous runs of present points (a missing value breaks the line).
fn runs(points: &[Option<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut current = Vec::new();
    for point in points {
        match point {
            Some(p) => current.push(*p),
            None if !current.is_empty() => runs.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

fn straight_path(path: &mut String, run: &[(f64, f64)]) {
    for (i, (x, y)) in run.iter().enumerate() {
        let command = if i == 0 { 'M' } else { 'L' };
        path.push_str(&format!("{command}{} {} ", num(*x), num(*y)));
    }
}

/// Catmull-Rom through every point, as cubic Béziers. Control points are kept between `top`
/// and `bottom`, so the curve never leaves the plot vertically (a Bézier stays inside the
/// hull of its control points).
fn smooth_path(path: &mut String, run: &[(f64, f64)], top: f64, bottom: f64) {
    let Some(&(x0, y0)) = run.first() else { return };
    path.push_str(&format!("M{} {} ", num(x0), num(y0)));
    let at = |i: usize| run.get(i).copied().unwrap_or((x0, y0));
    for i in 0..run.len().saturating_sub(1) {
        let p0 = at(i.saturating_sub(1));
        let p1 = at(i);
        let p2 = at(i + 1);
        let p3 = if i + 2 < run.len() { at(i + 2) } else { p2 };
        let c1 = (p1.0 + (p2.0 - p0.0) / 6.0, p1.1 + (p2.1 - p0.1) / 6.0);
        let c2 = (p2.0 - (p3.0 - p1.0) / 6.0, p2.1 - (p3.1 - p1.1) / 6.0);
        let clamp = |y: f64| y.clamp(top.min(bottom), bottom.max(top));
        path.push_str(&format!(
            "C{} {} {} {} {} {} ",
            num(c1.0),
            num(clamp(c1.1)),
            num(c2.0),
            num(clamp(c2.1)),
            num(p2.0),
            num(p2.1)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_split_the_line() {
        let points = [Some((0.0, 1.0)), Some((1.0, 2.0)), None, Some((3.0, 4.0))];
        assert_eq!(
            runs(&points),
            vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 4.0)]]
        );
    }

    #[test]
    fn smooth_paths_are_cubic_and_pass_through_the_points() {
        let run = [(0.0, 10.0), (10.0, 0.0), (20.0, 10.0)];
        let mut path = String::new();
        smooth_path(&mut path, &run, 0.0, 10.0);
        assert!(path.starts_with("M0 10 C"));
        assert_eq!(path.matches('C').count(), 2);
        assert!(path.trim_end().ends_with("20 10"));
        // The middle point is a peak at the top edge: control points stay inside.
        assert!(!path.contains('-'));
        let mut straight = String::new();
        straight_path(&mut straight, &run);
        assert_eq!(straight.trim_end(), "M0 10 L10 0 L20 10");
    }
}
