//! Layout of the line and bar charts — the plot area left after the title, tick labels,
//! category labels, axis titles and legend — and the drawing of grid, ticks and axes.

use super::{
    HEIGHT, MARGIN, Prepared, TEXT_COLOR, TITLE_BAND, WIDTH,
    escape::{num, text_width, truncate},
    geometry::Rect,
    legend,
    scale::{Scale, Ticks, nice_ticks, tick_labels},
    writer::Svg,
};

const TICK_FONT: f64 = 11.0;
const AXIS_TITLE_FONT: f64 = 12.0;
/// The longest x label shown when labels are rotated.
const MAX_ROTATED_CHARS: usize = 18;

/// How the category labels under the plot are drawn.
#[derive(Debug, Clone, PartialEq)]
struct XLabels {
    rotated: bool,
    /// Only every n-th label is shown when they would overlap.
    every: usize,
    shown: Vec<String>,
}

/// The laid-out frame of a line or bar chart.
#[derive(Debug, Clone)]
pub struct Cartesian {
    pub plot: Rect,
    pub scale: Scale,
    /// Horizontal room per label.
    pub band: f64,
    pub legend: Option<Rect>,
    ticks: Ticks,
    tick_text: Vec<String>,
    x_labels: XLabels,
}

impl Cartesian {
    /// Lays out a chart whose values span `[lo, hi]` (0 included by the caller if wanted).
    pub fn new(chart: &Prepared, lo: f64, hi: f64) -> Self {
        let ticks = nice_ticks(lo, hi);
        let tick_text = tick_labels(&ticks);
        let widest_tick = tick_text
            .iter()
            .map(|t| text_width(t, TICK_FONT))
            .fold(0.0, f64::max);
        let y_title_room = if chart.y_title.is_some() { 22.0 } else { 0.0 };
        let left = MARGIN + y_title_room + widest_tick + 8.0;
        let legend_w = if chart.show_legend {
            legend::width(chart.series.iter().map(|s| s.name.as_str()))
        } else {
            0.0
        };
        let legend_room = if legend_w > 0.0 { legend_w + 16.0 } else { 0.0 };
        let plot_w = (WIDTH - left - MARGIN - legend_room).max(120.0);
        let count = chart.labels.len().max(1);
        let band = plot_w / count as f64;

        let widest_label = chart
            .labels
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        let x_labels = if text_width(&"m".repeat(widest_label), TICK_FONT) <= band - 4.0 {
            XLabels {
                rotated: false,
                every: 1,
                shown: chart.labels.clone(),
            }
        } else {
            // Rotated labels need ~17 px between neighbours.
            let every = (17.0 / band).ceil().max(1.0) as usize;
            XLabels {
                rotated: true,
                every,
                shown: chart
                    .labels
                    .iter()
                    .map(|l| truncate(l, MAX_ROTATED_CHARS))
                    .collect(),
            }
        };
        // A label rotated by 45° reaches this far left of (and below) its anchor.
        let rotated_reach = widest_label.min(MAX_ROTATED_CHARS) as f64
            * TICK_FONT
            * 0.6
            * std::f64::consts::FRAC_1_SQRT_2;
        let label_room = if x_labels.rotated {
            14.0 + rotated_reach
        } else {
            20.0
        };
        // Keep the first rotated label inside the canvas: move the plot right if needed.
        let (left, plot_w, band) = if x_labels.rotated && left + band / 2.0 - rotated_reach < MARGIN
        {
            let shift = MARGIN - (left + band / 2.0 - rotated_reach);
            let plot_w = (plot_w - shift).max(120.0);
            (left + shift, plot_w, plot_w / count as f64)
        } else {
            (left, plot_w, band)
        };
        let x_title_room = if chart.x_title.is_some() { 22.0 } else { 0.0 };
        let bottom = MARGIN + label_room + x_title_room;
        let plot = Rect {
            x: left,
            y: TITLE_BAND,
            w: plot_w,
            h: (HEIGHT - TITLE_BAND - bottom).max(80.0),
        };
        let legend = (legend_w > 0.0).then_some(Rect {
            x: WIDTH - MARGIN - legend_w,
            y: TITLE_BAND,
            w: legend_w,
            h: HEIGHT - TITLE_BAND - MARGIN,
        });
        Self {
            scale: Scale::new(&ticks, &plot),
            plot,
            band,
            legend,
            ticks,
            tick_text,
            x_labels,
        }
    }

    /// The x pixel of the centre of label `i`'s band.
    pub fn x_center(&self, i: usize) -> f64 {
        self.plot.x + (i as f64 + 0.5) * self.band
    }

    /// Grid lines, tick labels, category labels and axis titles: everything under the marks.
    pub fn draw_background(&self, svg: &mut Svg, chart: &Prepared) {
        svg.open(
            "g",
            &[
                ("class", "grid"),
                ("stroke", "#e5e7eb"),
                ("stroke-width", "1"),
            ],
        );
        for value in &self.ticks.values {
            let y = num(self.scale.y(*value));
            svg.empty(
                "line",
                &[
                    ("x1", &num(self.plot.x)),
                    ("x2", &num(self.plot.right())),
                    ("y1", &y),
                    ("y2", &y),
                ],
            );
        }
        svg.close("g");

        let tick_font = num(TICK_FONT);
        svg.open(
            "g",
            &[
                ("class", "y-ticks"),
                ("font-size", &tick_font),
                ("fill", TEXT_COLOR),
                ("text-anchor", "end"),
            ],
        );
        for (value, text) in self.ticks.values.iter().zip(&self.tick_text) {
            let y = num(self.scale.y(*value) + TICK_FONT * 0.35);
            svg.text("text", &[("x", &num(self.plot.x - 8.0)), ("y", &y)], text);
        }
        svg.close("g");

        self.draw_x_labels(svg, chart);

        if let Some(title) = &chart.x_title {
            let room = self.plot.w;
            svg.text_with_tooltip(
                &[
                    ("class", "x-title"),
                    ("x", &num(self.plot.x + self.plot.w / 2.0)),
                    ("y", &num(HEIGHT - MARGIN)),
                    ("font-size", &num(AXIS_TITLE_FONT)),
                    ("fill", TEXT_COLOR),
                    ("text-anchor", "middle"),
                ],
                &truncate(title, super::escape::chars_fitting(room, AXIS_TITLE_FONT)),
                title,
            );
        }
        if let Some(title) = &chart.y_title {
            let (x, y) = (MARGIN + AXIS_TITLE_FONT, self.plot.y + self.plot.h / 2.0);
            svg.text_with_tooltip(
                &[
                    ("class", "y-title"),
                    ("x", &num(x)),
                    ("y", &num(y)),
                    ("transform", &format!("rotate(-90 {} {})", num(x), num(y))),
                    ("font-size", &num(AXIS_TITLE_FONT)),
                    ("fill", TEXT_COLOR),
                    ("text-anchor", "middle"),
                ],
                &truncate(
                    title,
                    super::escape::chars_fitting(self.plot.h, AXIS_TITLE_FONT),
                ),
                title,
            );
        }
    }

    fn draw_x_labels(&self, svg: &mut Svg, chart: &Prepared) {
        let anchor = if self.x_labels.rotated {
            "end"
        } else {
            "middle"
        };
        svg.open(
            "g",
            &[
                ("class", "x-labels"),
                ("font-size", &num(TICK_FONT)),
                ("fill", TEXT_COLOR),
                ("text-anchor", anchor),
            ],
        );
        let every = self.x_labels.every.max(1);
        for (i, (shown, full)) in self
            .x_labels
            .shown
            .iter()
            .zip(&chart.labels)
            .enumerate()
            .step_by(every)
        {
            let x = self.x_center(i);
            let tick_y = self.plot.bottom();
            svg.empty(
                "line",
                &[
                    ("x1", &num(x)),
                    ("x2", &num(x)),
                    ("y1", &num(tick_y)),
                    ("y2", &num(tick_y + 4.0)),
                    ("stroke", "#9ca3af"),
                ],
            );
            if self.x_labels.rotated {
                let y = tick_y + 12.0;
                let transform = format!("rotate(-45 {} {})", num(x), num(y));
                let attrs = [("x", num(x)), ("y", num(y)), ("transform", transform)];
                let attrs: Vec<(&str, &str)> =
                    attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
                if shown == full {
                    svg.text("text", &attrs, shown);
                } else {
                    svg.text_with_tooltip(&attrs, shown, full);
                }
            } else {
                svg.text("text", &[("x", &num(x)), ("y", &num(tick_y + 16.0))], shown);
            }
        }
        svg.close("g");
    }

    /// The axis lines and the zero line, drawn over the marks.
    pub fn draw_axes(&self, svg: &mut Svg) {
        svg.open(
            "g",
            &[
                ("class", "axes"),
                ("stroke", "#9ca3af"),
                ("stroke-width", "1"),
            ],
        );
        let (left, right, top, bottom) = (
            num(self.plot.x),
            num(self.plot.right()),
            num(self.plot.y),
            num(self.plot.bottom()),
        );
        svg.empty(
            "line",
            &[("x1", &left), ("x2", &left), ("y1", &top), ("y2", &bottom)],
        );
        svg.empty(
            "line",
            &[
                ("x1", &left),
                ("x2", &right),
                ("y1", &bottom),
                ("y2", &bottom),
            ],
        );
        if self.scale.crosses_zero() {
            let zero = num(self.scale.y(0.0));
            svg.empty(
                "line",
                &[
                    ("class", "zero"),
                    ("x1", &left),
                    ("x2", &right),
                    ("y1", &zero),
                    ("y2", &zero),
                    ("stroke", "#4b5563"),
                ],
            );
        }
        svg.close("g");
    }
}
