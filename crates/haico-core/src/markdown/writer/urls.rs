//! URLs as pulldown-cmark writes them and as the sanitiser checks them.

use std::fmt::Write as _;

use super::super::{LINK_SCHEMES, filter_attribute};

/// Bytes pulldown-cmark writes as they are in a URL (the others are %-encoded).
pub(super) const HREF_SAFE: &[u8] =
    b"!#$%&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ^_abcdefghijklmnopqrstuvwxyz~";

/// A link destination as pulldown-cmark writes it into `href`, as the attribute's value: bytes
/// outside [`HREF_SAFE`] %-encoded.
pub(super) fn href_value(url: &str) -> String {
    let mut value = String::with_capacity(url.len());
    for b in url.bytes() {
        if HREF_SAFE.contains(&b) {
            value.push(char::from(b));
        } else {
            let _ = write!(value, "%{b:02X}");
        }
    }
    value
}

/// The sanitiser's URL check: a URL with an allowed scheme, or a relative one.
pub(super) fn url_allowed(value: &str) -> bool {
    // An in-page link has no scheme: the parser would answer `RelativeUrlWithoutBase`.
    if value.starts_with('#') {
        return true;
    }
    match url::Url::parse(value) {
        Ok(url) => LINK_SCHEMES.contains(&url.scheme()),
        Err(error) => error == url::ParseError::RelativeUrlWithoutBase,
    }
}

/// A link's `href` as the sanitiser leaves it, `None` when it drops it.
pub(super) fn safe_href(value: &str) -> Option<String> {
    if !url_allowed(value) {
        return None;
    }
    filter_attribute("a", "href", value).map(|href| href.into_owned())
}
