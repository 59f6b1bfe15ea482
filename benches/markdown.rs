//! `markdown::to_safe_html` (pulldown-cmark + ammonia) on documents of 10 KB, 100 KB and 1 MB
//! of mixed Markdown: headings, paragraphs with emphasis and links, lists, task lists, a
//! table, code blocks, footnotes and a little raw HTML for the sanitiser to strip.
//!
//! `cargo bench --bench markdown`. `markdown/render_only` is pulldown-cmark alone, to show
//! how the time splits between rendering and sanitising. Above 8 KB the HTTP layer renders on
//! the blocking pool, so these times never stall the runtime's workers.
//!
//! `markdown/adversarial/{shape}/{bytes}` renders inputs built to be slow: deep block quotes
//! and lists, runs of emphasis, bracket and backtick delimiters, deeply nested raw HTML, a
//! table with thousands of columns and short rows, a long link reference used many times.
//! Each must stay roughly linear in its size (`cargo bench --bench markdown -- adversarial`).
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

/// `unit` repeated until the text is at least `bytes` long.
fn repeat(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len()))
}

/// Inputs of about `bytes` bytes built to find super-linear paths, by name.
pub fn adversarial(bytes: usize) -> Vec<(&'static str, String)> {
    let indented = {
        let mut doc = String::new();
        let mut depth = 0;
        while doc.len() < bytes {
            doc.push_str(&"  ".repeat(depth));
            doc.push_str("- x\n");
            depth = (depth + 1) % 500;
        }
        doc
    };
    let table = {
        let columns = (bytes / 20).max(2);
        let mut doc = format!("{}|\n{}|\n", "|a".repeat(columns), "|-".repeat(columns));
        doc.push_str(&repeat("a\n", bytes.saturating_sub(doc.len())));
        doc
    };
    let reference = {
        let url = "x".repeat(bytes / 4);
        let mut doc = format!("[r]: /{url}\n\n");
        doc.push_str(&repeat("[r] ", bytes.saturating_sub(doc.len())));
        doc
    };
    vec![
        ("quotes", repeat(">", bytes) + "x"),
        (
            "quote_lines",
            repeat("> ", bytes / 2) + "x\n" + &repeat(">\n", bytes / 2),
        ),
        ("lists", repeat("- ", bytes) + "x"),
        ("ordered_lists", repeat("1. ", bytes)),
        ("indented_lists", indented),
        ("stars", repeat("*", bytes)),
        ("star_words", repeat("*a ", bytes)),
        ("emphasis_words", repeat("_a_ ", bytes)),
        ("strong_open", repeat("**a", bytes)),
        ("brackets", repeat("[", bytes)),
        ("link_openers", repeat("[a](", bytes)),
        ("image_openers", repeat("![", bytes)),
        ("backticks", repeat("`", bytes)),
        ("backtick_runs", repeat("`a``", bytes)),
        ("raw_divs", repeat("<div>", bytes)),
        ("raw_inline", repeat("<b title=x>a ", bytes)),
        ("raw_table_quotes", repeat("> <table>\n\n", bytes)),
        ("table_columns", table),
        ("link_reference", reference),
        ("footnotes", repeat("[^a] ", bytes) + "\n\n[^a]: note\n"),
        ("entities", repeat("&amp;", bytes)),
    ]
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

    let mut group = c.benchmark_group("markdown/adversarial");
    group
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10);
    let sizes: Vec<usize> = std::env::var("HAICO_BENCH_MARKDOWN_SIZES")
        .ok()
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    for &size in &sizes {
        for (name, doc) in adversarial(size) {
            group.throughput(Throughput::Bytes(doc.len() as u64));
            group.bench_with_input(BenchmarkId::new(name, size), &doc, |b, doc| {
                b.iter(|| black_box(to_safe_html(black_box(doc))));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, markdown);
criterion_main!(benches);
