//! Plain geometry the layout modules share; it depends on nothing, so `axes`, `scale`,
//! `legend` and `pie` can all use it without depending on each other.

/// A rectangle in SVG pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
}
