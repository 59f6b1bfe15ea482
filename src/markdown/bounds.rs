//! The events between pulldown-cmark's parser and its HTML writer, bounded so that rendering
//! and sanitising stay linear in the input and stop when asked.
//!
//! [`Bounded`] wraps the parser's events:
//! - an element that would nest deeper than [`MAX_DEPTH`] is replaced by its Markdown source,
//!   as text (so `>` × 50,000 shows 40 quotes, then the rest of the `>`s as written); the text
//!   goes to the writer as (escaped) HTML, which it does not touch, so [`RawHtml`] never sees it;
//! - raw HTML goes through [`RawHtml`], which bounds how deeply it nests and closes what it
//!   leaves open when its Markdown container ends;
//! - before each event it asks whether to stop, and ends the stream when told to;
//! - it notes where each top-level block begins (in the source and in the output written so
//!   far), so that a render that outgrows its budget can keep the blocks before that point
//!   and show the rest as written.

use std::{cell::Cell, collections::VecDeque, ops::Range};

use pulldown_cmark::{CowStr, Event, Tag, TagEnd};

use super::raw_html::{Depth, RawHtml};

/// Markdown elements nest at most this deep (quotes, lists and their items, emphasis, links…
/// counted together); deeper ones are shown as their source text.
pub const MAX_DEPTH: usize = 40;

/// State shared between [`Bounded`], the output writer and the caller.
#[derive(Default)]
pub struct Progress {
    /// Bytes of HTML written so far.
    pub written: Cell<usize>,
    /// Set when the stream ended because it was told to stop.
    pub stopped: Cell<bool>,
    /// Where the last top-level block began: its offset in the source and the bytes of HTML
    /// written before it.
    pub boundary: Cell<(usize, usize)>,
}

/// The parser's events, bounded (see the module header).
pub struct Bounded<'a, 'p, I> {
    source: &'a str,
    events: I,
    depth: Depth,
    raw: RawHtml,
    pending: VecDeque<Event<'a>>,
    stop: &'p dyn Fn() -> bool,
    progress: &'p Progress,
}

impl<'a, 'p, I> Bounded<'a, 'p, I>
where
    I: Iterator<Item = (Event<'a>, Range<usize>)>,
{
    /// Bounds `events`, parsed from `source`; `stop` is asked before every event.
    pub fn new(
        source: &'a str,
        events: I,
        stop: &'p dyn Fn() -> bool,
        progress: &'p Progress,
    ) -> Self {
        Self {
            source,
            events,
            depth: Depth::default(),
            raw: RawHtml::default(),
            pending: VecDeque::new(),
            stop,
            progress,
        }
    }

    /// Skips the rest of the element whose start was just read; `false` when told to stop.
    fn skip_element(&mut self) -> bool {
        let mut open = 1usize;
        while open > 0 {
            if (self.stop)() {
                return false;
            }
            match self.events.next() {
                Some((Event::Start(_), _)) => open += 1,
                Some((Event::End(_), _)) => open -= 1,
                Some(_) => {}
                None => break,
            }
        }
        true
    }

    fn halt(&mut self) -> Option<Event<'a>> {
        self.progress.stopped.set(true);
        None
    }
}

/// Whether `tag` ends a container for [`Depth::containers`]: everything but paragraphs and
/// HTML blocks (inline elements count, they hold other inline elements).
fn is_container(tag: &TagEnd) -> bool {
    !matches!(tag, TagEnd::Paragraph | TagEnd::HtmlBlock)
}

impl<'a, I> Iterator for Bounded<'a, '_, I>
where
    I: Iterator<Item = (Event<'a>, Range<usize>)>,
{
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        if let Some(event) = self.pending.pop_front() {
            return Some(event);
        }
        if (self.stop)() {
            return self.halt();
        }
        let (event, range) = self.events.next()?;
        if self.depth.all == 0 {
            self.progress
                .boundary
                .set((range.start, self.progress.written.get()));
        }
        Some(match event {
            Event::Start(_) if self.depth.all >= MAX_DEPTH => {
                if !self.skip_element() {
                    return self.halt();
                }
                Event::InlineHtml(as_text(self.source.get(range).unwrap_or_default()))
            }
            Event::Start(tag) => {
                self.depth.all += 1;
                if !matches!(tag, Tag::Paragraph | Tag::HtmlBlock) {
                    self.depth.containers += 1;
                }
                Event::Start(tag)
            }
            Event::End(end) => {
                self.depth.all = self.depth.all.saturating_sub(1);
                if is_container(&end) {
                    self.depth.containers = self.depth.containers.saturating_sub(1);
                }
                match self.raw.closing(self.depth) {
                    Some(close) => {
                        self.pending.push_back(Event::End(end));
                        Event::InlineHtml(close.into())
                    }
                    None => Event::End(end),
                }
            }
            Event::Html(html) => Event::Html(self.raw.filter(html, self.depth)),
            Event::InlineHtml(html) => Event::InlineHtml(self.raw.filter(html, self.depth)),
            other => other,
        })
    }
}

/// `text` as HTML text, escaping only what HTML requires (`&` and `<`): pulldown-cmark would
/// also escape `>` and quotes, and the sanitiser then parses four bytes per `>` of a run of
/// 50,000 quote markers.
fn as_text(text: &str) -> CowStr<'_> {
    if !text.contains(['&', '<']) {
        return CowStr::Borrowed(text);
    }
    CowStr::from(text.replace('&', "&amp;").replace('<', "&lt;"))
}

/// The HTML writer's output, refusing to grow past a limit.
pub struct Budgeted<'p> {
    pub out: String,
    limit: usize,
    progress: &'p Progress,
}

impl<'p> Budgeted<'p> {
    pub fn new(capacity: usize, limit: usize, progress: &'p Progress) -> Self {
        Self {
            out: String::with_capacity(capacity.min(limit)),
            limit,
            progress,
        }
    }
}

impl std::fmt::Write for Budgeted<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.out.len() + s.len() > self.limit {
            return Err(std::fmt::Error);
        }
        self.out.push_str(s);
        self.progress.written.set(self.out.len());
        Ok(())
    }
}
