//! `markdown::to_safe_html` (pulldown-cmark + ammonia) on documents of 10 KB, 100 KB and 1 MB
//! of mixed Markdown: headings, paragraphs with emphasis and links, lists, task lists, a
//! table, code blocks, footnotes and a little raw HTML for the sanitiser to strip.
//!
//! `cargo bench --bench markdown`. `markdown/render_only` is pulldown-cmark alone, to show
//! how the time splits between rendering and sanitising. Above 8 KB the HTTP layer renders on
//! the blocking pool, so these times never stall the runtime's workers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{hint::black_box, time::Duration};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use haico::markdown::to_safe_html;

/// One section of a realistic document (about 1.3 KB).
fn section(n: usize) -> String {
    format!(
        "## Section {n}\n\n\
         This paragraph has *emphasis*, **strong text**, `inline code`, ~~a correction~~ and a \
         [link](https://example.com/page/{n}?q=1&r=2). It goes on for a while so that the \
         paragraph is about as long as the ones people write in a working document.[^n{n}]\n\n\
         - first point, with a [relative link](#section-{n})\n\
         - second point\n  1. nested step\n  2. another nested step\n\
         - [x] a finished task\n- [ ] an open task\n\n\
         | option | cost | risk |\n| :--- | ---: | :---: |\n| A{n} | 10 | low |\n| B{n} | 25 | high |\n\n\
         ```rust\nfn section_{n}() -> usize {{ {n} * 2 }}\n```\n\n\
         > A quote that someone said about section {n}.\n\n\
         <span title=\"x\" onclick=\"alert({n})\">inline html</span> \
         <img src=\"https://example.com/{n}.png\" onerror=\"alert(1)\">\n\n\
         [^n{n}]: The footnote of section {n}.\n\n"
    )
}

fn document(bytes: usize) -> String {
    let mut doc = String::from("# A working document\n\n");
    let mut n = 0;
    while doc.len() < bytes {
        doc.push_str(&section(n));
        n += 1;
    }
    doc
}

fn markdown(c: &mut Criterion) {
    let mut group = c.benchmark_group("markdown/to_safe_html");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(20);
    for size in [10_000, 100_000, 1_000_000] {
        let doc = document(size);
        group.throughput(Throughput::Bytes(doc.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &doc, |b, doc| {
            b.iter(|| black_box(to_safe_html(black_box(doc))));
        });
    }
    group.finish();

    // Where the time goes: pulldown-cmark's rendering alone, without the sanitiser.
    let mut group = c.benchmark_group("markdown/render_only");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(20);
    let doc = document(1_000_000);
    group.throughput(Throughput::Bytes(doc.len() as u64));
    group.bench_with_input(BenchmarkId::from_parameter(1_000_000), &doc, |b, doc| {
        b.iter(|| {
            let mut html = String::with_capacity(doc.len() * 2);
            pulldown_cmark::html::push_html(
                &mut html,
                pulldown_cmark::Parser::new_ext(black_box(doc), pulldown_cmark::Options::all()),
            );
            black_box(html)
        });
    });
    group.finish();
}

criterion_group!(benches, markdown);
criterion_main!(benches);
