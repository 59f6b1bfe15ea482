//! What a ring says: the rings a replica sends, written as payload lines (events coalesced per
//! thread, cut to PostgreSQL's size limit) and read back.

use std::collections::HashMap;

/// The largest payload sent (PostgreSQL refuses 8000 bytes and more).
pub(super) const MAX_PAYLOAD: usize = 7_000;

/// What a replica asks the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ring {
    /// The thread's log grew to `seq`.
    Event { thread: String, seq: i64 },
    /// Stop the thread's running turn.
    Cancel { thread: String },
    /// The start-up self-test.
    Probe { nonce: String },
    /// Accounts or sharing changed: forget who tokens are and who may do what.
    People,
}

/// Lines for `rings` (events coalesced per thread to the newest), cut into payloads that fit.
pub(super) fn payloads(rings: Vec<Ring>) -> Vec<String> {
    let mut newest: HashMap<String, i64> = HashMap::new();
    let mut lines = Vec::new();
    let mut people = false;
    for ring in rings {
        match ring {
            Ring::Event { thread, seq } => {
                let entry = newest.entry(thread).or_insert(seq);
                *entry = (*entry).max(seq);
            }
            Ring::Cancel { thread } => lines.push(format!("c {thread}")),
            Ring::Probe { nonce } => lines.push(format!("p {nonce}")),
            Ring::People => people = true,
        }
    }
    if people {
        lines.push("u".to_string());
    }
    lines.extend(
        newest
            .into_iter()
            .map(|(thread, seq)| format!("e {thread} {seq}")),
    );
    let mut payloads = Vec::new();
    let mut current = String::new();
    for line in lines {
        if !current.is_empty() && current.len() + 1 + line.len() > MAX_PAYLOAD {
            payloads.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(&line);
    }
    if !current.is_empty() {
        payloads.push(current);
    }
    payloads
}

/// Reads a payload back; lines it does not understand are skipped.
pub(super) fn parse(payload: &str) -> Vec<Ring> {
    payload
        .lines()
        .filter_map(|line| {
            let mut parts = line.split(' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("e"), Some(thread), Some(seq)) => Some(Ring::Event {
                    thread: thread.to_string(),
                    seq: seq.parse().ok()?,
                }),
                (Some("c"), Some(thread), None) => Some(Ring::Cancel {
                    thread: thread.to_string(),
                }),
                (Some("p"), Some(nonce), None) => Some(Ring::Probe {
                    nonce: nonce.to_string(),
                }),
                (Some("u"), None, None) => Some(Ring::People),
                _ => None,
            }
        })
        .collect()
}
