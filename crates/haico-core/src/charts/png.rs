//! PNG rendering of chart artifacts, for clients that want an image rather than SVG (an MCP
//! client showing a tool result, `GET …/artifacts/{artifact_id}/chart.png`).
//!
//! A PNG is the chart's own SVG ([`svg::render`]) rasterised in-process by `resvg`, so the two
//! never disagree about what a chart looks like. Text is drawn with DejaVu Sans (regular and
//! bold), which the binary carries: the SVG asks for `sans-serif`, and that family is mapped to
//! it, so a PNG is the same on every machine, whatever fonts the system has (none are looked
//! up). Characters DejaVu Sans lacks (CJK, most emoji) show as empty boxes in the PNG; the SVG
//! shows them with the viewer's fonts.
//!
//! The image is [`WIDTH`]×[`HEIGHT`] pixels: the SVG's 800×480 canvas at [`SCALE`] 2, crisp on
//! high-density screens and still small (a typical bar chart is a few tens of KB). The same
//! payload gives the same bytes with the same binary.
//!
//! Drawing takes milliseconds of CPU, so [`render_artifact`] does it on the blocking pool, with
//! at most one drawing per CPU at a time (each holds a ~6 MB canvas while it draws).

use std::sync::{Arc, LazyLock};

use resvg::{tiny_skia, usvg, usvg::fontdb};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::svg::{self, RenderError};
use crate::workspace::charts::{ChartPayload, ChartType};

/// The MIME type of a drawn chart.
pub const MIME: &str = "image/png";
/// How many image pixels one SVG unit becomes.
pub const SCALE: f32 = 2.0;
/// Image width in pixels.
pub const WIDTH: u32 = (svg::WIDTH * SCALE as f64) as u32;
/// Image height in pixels.
pub const HEIGHT: u32 = (svg::HEIGHT * SCALE as f64) as u32;

/// The family of the embedded faces, as their name table spells it.
const FAMILY: &str = "DejaVu Sans";

/// Why a chart could not be drawn as PNG.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    /// The artifact is not a chart, or its payload is not a chart payload (as for SVG).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The chart's SVG could not be read back; a defect of the SVG writer, not of the chart.
    #[error("the chart's SVG could not be read: {0}")]
    Svg(#[source] usvg::Error),
    /// The canvas could not be made (a zero or oversized image size).
    #[error("no {width}×{height} canvas could be made for the chart")]
    Canvas {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
    },
    /// The pixels could not be encoded.
    #[error("the chart could not be encoded as PNG: {0}")]
    Encode(String),
    /// The drawing task ended without an answer (it panicked, or the runtime is stopping).
    #[error("the chart's drawing was interrupted")]
    Interrupted,
}

/// The fonts text is drawn with: DejaVu Sans regular and bold, read once from the bytes the
/// binary carries (no copy), with `sans-serif` (and every other generic family) mapped to it.
static FONTS: LazyLock<Arc<fontdb::Database>> = LazyLock::new(|| {
    let mut fonts = fontdb::Database::new();
    for face in [dejavu::sans::regular(), dejavu::sans::bold()] {
        fonts.load_font_source(fontdb::Source::Binary(Arc::new(face)));
    }
    fonts.set_sans_serif_family(FAMILY);
    fonts.set_serif_family(FAMILY);
    fonts.set_monospace_family(FAMILY);
    fonts.set_cursive_family(FAMILY);
    fonts.set_fantasy_family(FAMILY);
    Arc::new(fonts)
});

/// How the SVG is read: the embedded fonts, and nothing ever loaded from outside (the charts'
/// SVG has no images; should one appear, it is dropped rather than fetched from disk).
static OPTIONS: LazyLock<usvg::Options<'static>> = LazyLock::new(|| usvg::Options {
    font_family: FAMILY.to_string(),
    fontdb: Arc::clone(&FONTS),
    image_href_resolver: usvg::ImageHrefResolver {
        resolve_data: Box::new(|_, _, _| None),
        resolve_string: Box::new(|_, _| None),
    },
    ..usvg::Options::default()
});

/// Drawings running at once, at most one per CPU.
static DRAWING: LazyLock<Semaphore> =
    LazyLock::new(|| Semaphore::new(std::thread::available_parallelism().map_or(1, |n| n.get())));

/// Draws a stored chart artifact as PNG, on the blocking pool. Refuses what
/// [`svg::render_artifact`] refuses, with the same errors.
pub async fn render_artifact(artifact_type: &str, payload: &Value) -> Result<Vec<u8>, PngError> {
    // The SVG is cheap and checks the artifact; only rasterising goes to the pool.
    let drawn = svg::render_artifact(artifact_type, payload)?;
    let _permit = DRAWING.acquire().await.map_err(|_| PngError::Interrupted)?;
    tokio::task::spawn_blocking(move || rasterize(&drawn))
        .await
        .map_err(|_| PngError::Interrupted)?
}

/// Draws a chart as PNG on the calling thread (it takes milliseconds: async callers use
/// [`render_artifact`]).
pub fn render(kind: ChartType, chart: &ChartPayload) -> Result<Vec<u8>, PngError> {
    rasterize(&svg::render(kind, chart))
}

/// Rasterises one of the charts' SVG documents at [`SCALE`].
fn rasterize(svg_text: &str) -> Result<Vec<u8>, PngError> {
    let tree = usvg::Tree::from_str(svg_text, &OPTIONS).map_err(PngError::Svg)?;
    let size = tree.size();
    let width = (size.width() * SCALE).round() as u32;
    let height = (size.height() * SCALE).round() as u32;
    let mut pixmap =
        tiny_skia::Pixmap::new(width, height).ok_or(PngError::Canvas { width, height })?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|err| PngError::Encode(err.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::workspace::charts::{ChartData, ChartStyle, Series};

    fn bar_chart(title: &str) -> ChartPayload {
        ChartPayload {
            title: title.to_string(),
            description: None,
            data: ChartData {
                labels: vec!["Q1".into(), "Q2".into(), "Q3".into()],
                series: vec![Series {
                    name: "Revenue".into(),
                    values: vec![3.0, 5.5, 4.0],
                }],
            },
            x_axis_title: Some("Quarter".into()),
            y_axis_title: Some("k€".into()),
            style: ChartStyle::default(),
        }
    }

    /// Decodes a PNG with an independent decoder: its size and its RGBA pixels.
    fn decode(bytes: &[u8]) -> (u32, u32, Vec<[u8; 4]>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut buffer).unwrap();
        assert_eq!(
            (frame.color_type, frame.bit_depth),
            (png::ColorType::Rgba, png::BitDepth::Eight)
        );
        let pixels = buffer[..frame.buffer_size()]
            .chunks(4)
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect();
        (frame.width, frame.height, pixels)
    }

    #[test]
    fn a_bar_chart_decodes_at_twice_the_svg_size_and_is_not_blank() {
        let png = render(ChartType::Bar, &bar_chart("Revenue by quarter")).unwrap();
        let (width, height, pixels) = decode(&png);
        assert_eq!((width, height), (WIDTH, HEIGHT));
        assert_eq!((WIDTH, HEIGHT), (1600, 960));
        assert_eq!(pixels.len(), (WIDTH * HEIGHT) as usize);
        assert!(pixels.iter().all(|p| p[3] == 255), "opaque everywhere");
        assert_eq!(pixels[0], [255, 255, 255, 255], "white background");
        let colours: HashSet<[u8; 4]> = pixels.iter().copied().collect();
        assert!(colours.len() > 10, "only {} colours", colours.len());
        // The first palette colour (#4e79a7) fills the bars.
        let bar = pixels
            .iter()
            .filter(|p| **p == [0x4e, 0x79, 0xa7, 255])
            .count();
        assert!(bar > 10_000, "{bar} bar pixels");
    }

    #[test]
    fn text_is_drawn_with_the_embedded_font() {
        // The same chart with and without a title differs only by the title's glyphs: if no
        // font were found, both would be the same image.
        let titled = render(ChartType::Pie, &bar_chart("A title with text")).unwrap();
        let untitled = render(ChartType::Pie, &bar_chart("")).unwrap();
        assert_ne!(decode(&titled).2, decode(&untitled).2);
        assert_eq!(FONTS.len(), 2);
        assert!(FONTS.faces().all(|face| face.families[0].0 == FAMILY));
    }

    #[test]
    fn output_is_deterministic_for_every_kind() {
        let chart = bar_chart("Same <bytes> & every time");
        for kind in [ChartType::Line, ChartType::Bar, ChartType::Pie] {
            let first = render(kind, &chart).unwrap();
            assert_eq!(first, render(kind, &chart).unwrap(), "{kind:?}");
            assert_eq!(decode(&first).0, WIDTH);
        }
    }

    #[tokio::test]
    async fn artifacts_that_cannot_be_drawn_are_refused_as_for_svg() {
        let payload = serde_json::json!({"title": "x"});
        assert!(matches!(
            render_artifact("note", &payload).await,
            Err(PngError::Render(RenderError::NotAChart(kind))) if kind == "note"
        ));
        assert!(matches!(
            render_artifact("bar_chart", &payload).await,
            Err(PngError::Render(RenderError::InvalidPayload(_)))
        ));
        let stored = serde_json::to_value(bar_chart("Stored")).unwrap();
        let png = render_artifact("line_chart", &stored).await.unwrap();
        assert_eq!(decode(&png).1, HEIGHT);
    }
}
