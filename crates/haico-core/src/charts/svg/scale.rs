//! The value axis: "nice" round ticks covering the data, their labels, and the mapping of
//! values to vertical pixels.

use super::geometry::Rect;

/// How many ticks the value axis aims for.
const TARGET_TICKS: f64 = 5.0;

/// The value axis: a domain `[lo, hi]` and the tick values inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    pub lo: f64,
    pub hi: f64,
    /// The distance between ticks, when they are evenly spaced.
    pub step: Option<f64>,
    pub values: Vec<f64>,
}

/// A 1-2-2.5-5 step near `raw`.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 2.5 {
        2.5
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// Round ticks covering `[lo, hi]`: the domain is widened to whole steps. Degenerate input
/// (equal or non-finite bounds, spans too large to step through) still gives a usable axis.
pub fn nice_ticks(lo: f64, hi: f64) -> Ticks {
    let (mut lo, mut hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if lo == hi {
        if lo == 0.0 {
            hi = 1.0;
        } else {
            let pad = lo.abs() * 0.1;
            (lo, hi) = (lo - pad, hi + pad);
        }
    }
    let fallback = Ticks {
        lo,
        hi,
        step: None,
        values: vec![lo, hi],
    };
    // Halves, so that a span like [-1e308, 1e308] does not overflow.
    let half_span = hi / 2.0 - lo / 2.0;
    let step = nice_step(half_span / TARGET_TICKS * 2.0);
    if !step.is_finite() || step <= 0.0 {
        return fallback;
    }
    let first = (lo / step).floor();
    let last = (hi / step).ceil();
    if !first.is_finite() || !last.is_finite() || last - first > 50.0 || last < first {
        return fallback;
    }
    let (first, last) = (first as i64, last as i64);
    let values: Vec<f64> = (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            if v.abs() < step * 1e-9 { 0.0 } else { v }
        })
        .collect();
    match (values.first(), values.last()) {
        (Some(&lo), Some(&hi)) if lo < hi && lo.is_finite() && hi.is_finite() => Ticks {
            lo,
            hi,
            step: Some(step),
            values,
        },
        _ => fallback,
    }
}

/// Tick labels: thousands as `k`, millions `M`, billions `B`, trillions `T`, beyond that (or
/// for tiny values) scientific notation; as many decimals as the step needs.
pub fn tick_labels(ticks: &Ticks) -> Vec<String> {
    let max_abs = ticks.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if max_abs >= 1e15 || (max_abs > 0.0 && max_abs < 1e-4) {
        return ticks
            .values
            .iter()
            .map(|v| {
                if *v == 0.0 {
                    "0".to_string()
                } else {
                    format!("{v:.2e}")
                }
            })
            .collect();
    }
    let (divisor, suffix) = if max_abs >= 1e12 {
        (1e12, "T")
    } else if max_abs >= 1e9 {
        (1e9, "B")
    } else if max_abs >= 1e6 {
        (1e6, "M")
    } else if max_abs >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let decimals = decimals_for(ticks.step.unwrap_or(max_abs) / divisor);
    ticks
        .values
        .iter()
        .map(|v| {
            if *v == 0.0 {
                return "0".to_string();
            }
            let mut text = format!("{:.*}", decimals, v / divisor);
            if text
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                text = "0".to_string();
            }
            format!("{text}{suffix}")
        })
        .collect()
}

/// The fewest decimals (at most 6) that show `step` exactly.
fn decimals_for(step: f64) -> usize {
    let mut scaled = step.abs();
    for decimals in 0..6 {
        if (scaled - scaled.round()).abs() <= 1e-6 * scaled.max(1.0) {
            return decimals;
        }
        scaled *= 10.0;
    }
    6
}

/// Maps values of the domain `[lo, hi]` onto the plot's vertical pixel range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    lo: f64,
    hi: f64,
    top: f64,
    bottom: f64,
}

impl Scale {
    pub fn new(ticks: &Ticks, plot: &Rect) -> Self {
        Self {
            lo: ticks.lo,
            hi: ticks.hi,
            top: plot.y,
            bottom: plot.bottom(),
        }
    }

    /// The y pixel of `value`, kept inside the plot.
    pub fn y(&self, value: f64) -> f64 {
        // Halves again: no overflow for any finite domain.
        let t = (value / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0);
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.5
        };
        self.bottom - t * (self.bottom - self.top)
    }

    /// Whether 0 lies strictly inside the domain (then a zero line is drawn).
    pub fn crosses_zero(&self) -> bool {
        self.lo < 0.0 && self.hi > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        let t = nice_ticks(0.0, 97.0);
        assert_eq!(t.values, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!((t.lo, t.hi), (0.0, 100.0));
        let t = nice_ticks(-3.2, 7.9);
        assert_eq!(t.step, Some(2.5));
        assert_eq!(t.lo, -5.0);
        assert_eq!(t.hi, 10.0);
        assert!(t.values.contains(&0.0));
        let t = nice_ticks(0.0, 0.3);
        assert_eq!(tick_labels(&t), ["0", "0.1", "0.2", "0.3"]);
    }

    #[test]
    fn degenerate_domains_still_make_an_axis() {
        let t = nice_ticks(0.0, 0.0);
        assert_eq!((t.lo, t.hi), (0.0, 1.0));
        let t = nice_ticks(5.0, 5.0);
        assert!(t.lo < 5.0 && t.hi > 5.0);
        let t = nice_ticks(f64::NAN, 3.0);
        assert!(t.lo < t.hi);
        let t = nice_ticks(-f64::MAX, f64::MAX);
        assert!(t.lo < t.hi && t.values.len() >= 2);
        assert!(t.values.iter().all(|v| v.is_finite()));
        let t = nice_ticks(9.0, 1.0);
        assert!(t.lo <= 1.0 && t.hi >= 9.0);
    }

    #[test]
    fn tick_labels_use_units_and_just_enough_decimals() {
        let labels = |lo, hi| tick_labels(&nice_ticks(lo, hi));
        assert_eq!(labels(0.0, 100.0), ["0", "20", "40", "60", "80", "100"]);
        assert_eq!(
            labels(0.0, 50_000.0),
            ["0", "10k", "20k", "30k", "40k", "50k"]
        );
        assert_eq!(
            labels(0.0, 2.5e6),
            ["0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M"]
        );
        assert_eq!(labels(-1.0, 1.0), ["-1.0", "-0.5", "0", "0.5", "1.0"]);
        assert_eq!(labels(0.0, 1e16)[1], "2.00e15");
    }

    #[test]
    fn scale_maps_domain_to_pixels_top_down() {
        let ticks = nice_ticks(-50.0, 100.0);
        let plot = Rect {
            x: 0.0,
            y: 100.0,
            w: 10.0,
            h: 300.0,
        };
        let scale = Scale::new(&ticks, &plot);
        assert!((scale.y(ticks.hi) - 100.0).abs() < 1e-9);
        assert!((scale.y(ticks.lo) - 400.0).abs() < 1e-9);
        assert!((scale.y(0.0) - 300.0).abs() < 1e-9);
        assert!(scale.crosses_zero());
        // Out of range values stay inside the plot.
        assert!((scale.y(1e9) - 100.0).abs() < 1e-9);
        let huge = nice_ticks(-f64::MAX, f64::MAX);
        let scale = Scale::new(&huge, &plot);
        assert!(scale.y(f64::MAX).is_finite() && scale.y(0.0).is_finite());
    }
}
