//! The events between pulldown-cmark's parser and the HTML writer (`writer`), bounded so that
//! rendering and sanitising stay linear in the input and stop when asked.
//!
//! [`Bounded`] wraps the parser's events:
//! - an element that would nest deeper than [`MAX_DEPTH`] is replaced by its Markdown source,
//!   as text (so `>` × 50,000 shows 40 quotes, then the rest of the `>`s as written), which
//!   the writer escapes like any text;
//! - raw HTML goes through [`RawHtml`], which bounds how deeply it nests and closes what it
//!   leaves open when its Markdown container ends;
//! - before each event it asks whether to stop, and ends the stream when told to;
//! - it marks the events that begin a top-level block with their offset in the source, so
//!   that a render that outgrows its budget can keep the blocks before that point and show
//!   the rest as written;
//! - at the end of the document it closes the raw elements still open.

use std::{cell::Cell, collections::VecDeque, ops::Range};

use pulldown_cmark::{CowStr, Event, Tag, TagEnd};

use super::raw_html::{Depth, RawHtml};

/// Markdown elements nest at most this deep (quotes, lists and their items, emphasis, links…
/// counted together); deeper ones are shown as their source text.
pub const MAX_DEPTH: usize = 40;

/// State shared between [`Bounded`] and the caller.
#[derive(Default)]
pub struct Progress {
    /// Set when the stream ended because it was told to stop.
    pub stopped: Cell<bool>,
}

/// One bounded event, with what the writer needs to know about where it stands.
pub struct Step<'a> {
    pub event: Event<'a>,
    /// The event's offset in the source when it begins a top-level block.
    pub top_level: Option<usize>,
    /// Whether the raw HTML seen so far (this event included) has closed all it opened.
    pub raw_balanced: bool,
}

/// The parser's events, bounded (see the module header).
pub struct Bounded<'a, 'p, I> {
    source: &'a str,
    events: I,
    depth: Depth,
    raw: RawHtml,
    pending: VecDeque<Event<'a>>,
    finished: bool,
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
            finished: false,
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

    fn halt(&mut self) -> Option<Step<'a>> {
        self.progress.stopped.set(true);
        None
    }

    fn step(&self, event: Event<'a>, top_level: Option<usize>) -> Step<'a> {
        Step {
            event,
            top_level,
            raw_balanced: self.raw.is_balanced(),
        }
    }

    /// The end of the document: the raw elements still open, closed.
    fn finish(&mut self) -> Option<Step<'a>> {
        if std::mem::replace(&mut self.finished, true) {
            return None;
        }
        let close = self.raw.close_all()?;
        Some(self.step(Event::InlineHtml(close.into()), None))
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
    type Item = Step<'a>;

    fn next(&mut self) -> Option<Step<'a>> {
        if let Some(event) = self.pending.pop_front() {
            return Some(self.step(event, None));
        }
        if (self.stop)() {
            return self.halt();
        }
        let Some((event, range)) = self.events.next() else {
            return self.finish();
        };
        let top_level = (self.depth.all == 0).then_some(range.start);
        let event = match event {
            Event::Start(_) if self.depth.all >= MAX_DEPTH => {
                if !self.skip_element() {
                    return self.halt();
                }
                // Shown as written: the writer escapes text.
                Event::Text(CowStr::Borrowed(self.source.get(range).unwrap_or_default()))
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
        };
        Some(self.step(event, top_level))
    }
}
