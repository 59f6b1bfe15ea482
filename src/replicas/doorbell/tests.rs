//! Unit tests of the doorbell's payloads: rings written, coalesced, cut and read back.

use super::*;
use wire::MAX_PAYLOAD;

#[test]
fn payloads_coalesce_events_and_stay_small() {
    let mut rings = vec![Ring::Cancel { thread: "t".into() }];
    for seq in 1..=5 {
        rings.push(Ring::Event {
            thread: "a".into(),
            seq,
        });
    }
    let sent = payloads(rings);
    assert_eq!(sent.len(), 1);
    let mut got = parse(&sent[0]);
    got.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(
        got,
        vec![
            Ring::Cancel { thread: "t".into() },
            Ring::Event {
                thread: "a".into(),
                seq: 5
            },
        ]
    );

    let many: Vec<Ring> = (0..2_000)
        .map(|i| Ring::Event {
            thread: format!("thread-{i:0>60}"),
            seq: i,
        })
        .collect();
    let sent = payloads(many);
    assert!(sent.len() > 1);
    assert!(sent.iter().all(|p| p.len() <= MAX_PAYLOAD));
    let back: usize = sent.iter().map(|p| parse(p).len()).sum();
    assert_eq!(back, 2_000);
}

#[test]
fn parse_skips_what_it_does_not_know() {
    assert_eq!(
        parse("x y\ne t notanumber\ne t 7\nc\n"),
        vec![Ring::Event {
            thread: "t".into(),
            seq: 7
        }]
    );
}

#[test]
fn changes_to_people_ring_once_per_batch() {
    let sent = payloads(vec![
        Ring::People,
        Ring::Cancel { thread: "t".into() },
        Ring::People,
    ]);
    assert_eq!(sent.len(), 1);
    let got = parse(&sent[0]);
    assert_eq!(
        got.iter().filter(|ring| **ring == Ring::People).count(),
        1,
        "{got:?}"
    );
    assert!(got.contains(&Ring::Cancel { thread: "t".into() }));
    assert_eq!(
        parse("u extra"),
        Vec::new(),
        "a ring with more words is not one"
    );
}
