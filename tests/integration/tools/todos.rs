//! Plan tools (`add_todos`, `toggle_todos`, `update_todos`, `remove_todos`, `list_todos`), on
//! SQLite and PostgreSQL.

use crate::common;

use common::Harness;
use haico::store::Database;
use serde_json::{Value, json};

/// `fields` plus the `action_and_reasoning` every call must carry.
fn args(fields: Value) -> Value {
    let mut map = match fields {
        Value::Object(map) => map,
        other => panic!("test arguments must be an object, got {other}"),
    };
    map.insert(
        "action_and_reasoning".into(),
        json!("Keep the plan current."),
    );
    Value::Object(map)
}

/// `add_todos` steps from `(text, depth)` pairs.
fn steps(list: &[(&str, i64)]) -> Value {
    Value::Array(
        list.iter()
            .map(|(text, depth)| json!({"text": text, "depth": depth}))
            .collect(),
    )
}

/// The plan as `(text, depth, done)`, in order.
async fn plan(h: &Harness) -> Vec<(String, i64, bool)> {
    h.workspace()
        .await
        .plan
        .into_iter()
        .map(|t| (t.text, t.depth, t.done))
        .collect()
}

fn expect(list: &[(&str, i64, bool)]) -> Vec<(String, i64, bool)> {
    list.iter()
        .map(|(text, depth, done)| (text.to_string(), *depth, *done))
        .collect()
}

/// The steps' stored order keys as ranks (see [`common::step_ranks`]).
async fn positions(h: &Harness) -> Vec<i64> {
    common::step_ranks(h.db(), h.thread.as_str()).await
}

async fn list(h: &Harness) -> String {
    h.ok("list_todos", args(json!({}))).await
}

/// A (0) > A1 (1) > A1a (2), A2 (1), B (0).
async fn seed_outline(h: &Harness) {
    h.ok(
        "add_todos",
        args(json!({"steps": steps(&[("A", 0), ("A1", 1), ("A1a", 2), ("A2", 1), ("B", 0)])})),
    )
    .await;
}

async fn seed_flat(h: &Harness, texts: &[&str]) {
    let list: Vec<(&str, i64)> = texts.iter().map(|t| (*t, 0)).collect();
    h.ok("add_todos", args(json!({"steps": steps(&list)})))
        .await;
}

backend_tests! {
    async fn add_todos_appends_an_outline_at_the_end(engine) {
        let h = Harness::new(engine).await;
        assert_eq!(list(&h).await, "(the plan is empty)");

        let s = h.ok("add_todos", args(json!({"steps": steps(&[("Research", 0), ("Flights", 1), ("Prices", 2), ("Book", 0)])}))).await;
        assert_eq!(s, "added 4 steps at the end of the plan (the plan now has 4 steps)");
        // depth defaults to 0 and texts are trimmed.
        let s = h.ok("add_todos", args(json!({"steps": [{"text": "  Pack  "}, {"text": "Bags", "depth": 1}]}))).await;
        assert_eq!(s, "added 2 steps at the end of the plan (the plan now has 6 steps)");
        let s = h.ok("add_todos", args(json!({"steps": [{"text": "Go"}], "parent_index": null}))).await;
        assert_eq!(s, "added 1 step at the end of the plan (the plan now has 7 steps)");

        assert_eq!(
            plan(&h).await,
            expect(&[
                ("Research", 0, false),
                ("Flights", 1, false),
                ("Prices", 2, false),
                ("Book", 0, false),
                ("Pack", 0, false),
                ("Bags", 1, false),
                ("Go", 0, false),
            ])
        );
        assert_eq!(
            list(&h).await,
            "1. [ ] Research\n  2. [ ] Flights\n    3. [ ] Prices\n4. [ ] Book\n5. [ ] Pack\n  6. [ ] Bags\n7. [ ] Go"
        );
        assert_eq!(positions(&h).await, (0..7).collect::<Vec<i64>>());
        h.cleanup().await;
    }

    async fn add_todos_under_a_parent_goes_after_its_last_descendant(engine) {
        let h = Harness::new(engine).await;
        seed_outline(&h).await;

        // Under A (depth 0): after A2, the last of A's descendants; depths offset by 1.
        let s = h.ok("add_todos", args(json!({"parent_index": 1, "steps": steps(&[("X", 0), ("X1", 1)])}))).await;
        assert_eq!(s, "added 2 steps under step 1 \"A\" (the plan now has 7 steps)");
        assert_eq!(
            plan(&h).await,
            expect(&[
                ("A", 0, false),
                ("A1", 1, false),
                ("A1a", 2, false),
                ("A2", 1, false),
                ("X", 1, false),
                ("X1", 2, false),
                ("B", 0, false),
            ])
        );

        // Under A1 (depth 1): after A1a, before A2; depths offset by 2.
        let s = h.ok("add_todos", args(json!({"parent_index": 2, "steps": steps(&[("Y", 0), ("Y1", 1), ("Z", 0)])}))).await;
        assert_eq!(s, "added 3 steps under step 2 \"A1\" (the plan now has 10 steps)");

        // Under a leaf (A2, now index 7): right after it.
        h.ok("add_todos", args(json!({"parent_index": 7, "steps": steps(&[("Leaf", 0)])}))).await;
        // Under the last step: at the very end.
        h.ok("add_todos", args(json!({"parent_index": 11, "steps": steps(&[("B1", 0)])}))).await;

        assert_eq!(
            plan(&h).await,
            expect(&[
                ("A", 0, false),
                ("A1", 1, false),
                ("A1a", 2, false),
                ("Y", 2, false),
                ("Y1", 3, false),
                ("Z", 2, false),
                ("A2", 1, false),
                ("Leaf", 2, false),
                ("X", 1, false),
                ("X1", 2, false),
                ("B", 0, false),
                ("B1", 1, false),
            ])
        );
        h.ok("toggle_todos", args(json!({"indices": [4, 11]}))).await;
        assert_eq!(
            list(&h).await,
            [
                "1. [ ] A",
                "  2. [ ] A1",
                "    3. [ ] A1a",
                "    4. [x] Y",
                "      5. [ ] Y1",
                "    6. [ ] Z",
                "  7. [ ] A2",
                "    8. [ ] Leaf",
                "  9. [ ] X",
                "    10. [ ] X1",
                "11. [x] B",
                "  12. [ ] B1",
            ]
            .join("\n")
        );
        assert_eq!(positions(&h).await, (0..12).collect::<Vec<i64>>());
        h.cleanup().await;
    }

    async fn add_todos_rejects_outlines_that_do_not_nest(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["one", "two"]).await;

        let e = h.fail("add_todos", args(json!({"steps": steps(&[("a", 1)])}))).await;
        assert!(e.contains("steps[0].depth") && e.contains("depth 0"), "{e}");
        // Still true under a parent: depths are relative to the outline.
        let e = h.fail("add_todos", args(json!({"parent_index": 1, "steps": steps(&[("a", 1)])}))).await;
        assert!(e.contains("steps[0].depth"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", 1), ("c", 3)])}))).await;
        assert!(e.contains("steps[2].depth") && e.contains("one level deeper"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", 2)])}))).await;
        assert!(e.contains("steps[1].depth"), "{e}");
        // A negative depth is a type error, reported against the field.
        let e = h.fail("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", -1)])}))).await;
        assert!(e.contains("steps[1].depth"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"text": "a", "depth": 0.5}]}))).await;
        assert!(e.contains("steps[0].depth"), "{e}");
        // One bad step anywhere fails the whole batch.
        let e = h.fail("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", 1), ("c", 0), ("d", 2)])}))).await;
        assert!(e.contains("steps[3].depth"), "{e}");

        // Going back up any number of levels is fine.
        h.ok("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", 1), ("c", 2), ("d", 0)])}))).await;
        assert_eq!(plan(&h).await.len(), 6);
        h.cleanup().await;
    }

    async fn add_todos_caps_the_nesting_depth(engine) {
        let h = Harness::new(engine).await;
        let deep: Vec<(String, i64)> = (0..=13).map(|d| (format!("level {d}"), d)).collect();
        let as_steps = |n: usize| steps(&deep[..n].iter().map(|(t, d)| (t.as_str(), *d)).collect::<Vec<_>>());
        let e = h.fail("add_todos", args(json!({"steps": as_steps(14)}))).await;
        assert!(e.contains("depth 13") && e.contains("12"), "{e}");
        h.ok("add_todos", args(json!({"steps": as_steps(13)}))).await;
        assert_eq!(plan(&h).await.last().unwrap().1, 12);
        // Under the deepest step, even a top-level outline would be too deep.
        let e = h.fail("add_todos", args(json!({"parent_index": 13, "steps": steps(&[("deeper", 0)])}))).await;
        assert!(e.contains("depth 13"), "{e}");
        h.ok("add_todos", args(json!({"parent_index": 12, "steps": steps(&[("sibling", 0)])}))).await;
        assert_eq!(plan(&h).await.last().unwrap(), &("sibling".to_string(), 12, false));
        h.cleanup().await;
    }

    async fn add_todos_rejects_unknown_parents(engine) {
        let h = Harness::new(engine).await;
        let e = h.fail("add_todos", args(json!({"parent_index": 1, "steps": steps(&[("a", 0)])}))).await;
        assert!(e.contains("parent_index") && e.contains("0 steps"), "{e}");

        seed_flat(&h, &["one", "two", "three"]).await;
        for bad in [json!(0), json!(-1), json!(4), json!(i64::MAX), json!(i64::MIN)] {
            let e = h.fail("add_todos", args(json!({"parent_index": bad, "steps": steps(&[("a", 0)])}))).await;
            assert!(e.contains("parent_index") && e.contains(&bad.to_string()), "{e}");
            assert!(e.contains("3 steps"), "{e}");
        }
        let e = h.fail("add_todos", args(json!({"parent_index": "1", "steps": steps(&[("a", 0)])}))).await;
        assert!(e.contains("parent_index"), "{e}");
        assert_eq!(plan(&h).await.len(), 3);
        h.cleanup().await;
    }

    async fn add_todos_rejects_empty_batches_and_blank_text(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["one"]).await;
        let e = h.fail("add_todos", args(json!({"steps": []}))).await;
        assert!(e.contains("`steps` is empty"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"text": ""}]}))).await;
        assert!(e.contains("steps[0].text") && e.contains("empty"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"text": "fine"}, {"text": " \n\t "}]}))).await;
        assert!(e.contains("steps[1].text") && e.contains("empty"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"text": "x".repeat(2_001)}]}))).await;
        assert!(e.contains("steps[0].text") && e.contains("2001"), "{e}");
        // Exactly at the limit, counted in code points, is fine.
        h.ok("add_todos", args(json!({"steps": [{"text": "é".repeat(2_000)}]}))).await;
        assert_eq!(plan(&h).await.len(), 2);
        h.cleanup().await;
    }

    async fn toggle_todos_flips_and_reports_out_of_range(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["a", "b", "c"]).await;

        let s = h.ok("toggle_todos", args(json!({"indices": [1, 0, 3, -2, 99, i64::MAX, i64::MIN]}))).await;
        assert_eq!(
            s,
            format!("marked done: 1, 3; skipped indices 0, -2, 99, {}, {}: out of range (the plan has 3 steps)", i64::MAX, i64::MIN)
        );
        assert_eq!(plan(&h).await, expect(&[("a", 0, true), ("b", 0, false), ("c", 0, true)]));

        let s = h.ok("toggle_todos", args(json!({"indices": [1, 2]}))).await;
        assert_eq!(s, "marked done: 2; marked not done: 1");
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("b", 0, true), ("c", 0, true)]));
        assert_eq!(list(&h).await, "1. [ ] a\n2. [x] b\n3. [x] c");

        // A repeated index toggles once.
        let s = h.ok("toggle_todos", args(json!({"indices": [3, 3, 3]}))).await;
        assert_eq!(s, "marked not done: 3");
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("b", 0, true), ("c", 0, false)]));

        // Nothing in range: a successful call that reports and changes nothing.
        let before = h.state().await;
        let s = h.ok("toggle_todos", args(json!({"indices": [4, 0, -1]}))).await;
        assert_eq!(s, "nothing changed: indices 4, 0, -1 are out of range (the plan has 3 steps); use the step numbers of the current plan");
        h.assert_only_marked_since(&before).await;

        let e = h.fail("toggle_todos", args(json!({"indices": []}))).await;
        assert!(e.contains("`indices` is empty"), "{e}");
        h.cleanup().await;
    }

    async fn toggle_todos_on_an_empty_plan_reports_every_index(engine) {
        let h = Harness::new(engine).await;
        let s = h.ok("toggle_todos", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "nothing changed: index 1 is out of range (the plan is empty); add steps with add_todos first");
        assert!(plan(&h).await.is_empty());
        h.cleanup().await;
    }

    async fn update_todos_rewrites_and_reports_out_of_range(engine) {
        let h = Harness::new(engine).await;
        h.ok("add_todos", args(json!({"steps": steps(&[("a", 0), ("b", 1), ("c", 0)])}))).await;
        h.ok("toggle_todos", args(json!({"indices": [2]}))).await;

        let s = h.ok("update_todos", args(json!({"updates": [
            {"index": 3, "text": "  C!  "},
            {"index": 2, "text": "B, rewritten"},
            {"index": 7, "text": "nowhere"},
            {"index": 0, "text": "nowhere"},
        ]}))).await;
        assert_eq!(s, "rewrote steps 3, 2; skipped indices 7, 0: out of range (the plan has 3 steps)");
        // Depth and done stay as they were.
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("B, rewritten", 1, true), ("C!", 0, false)]));

        // Extreme indices are reported like any other.
        let s = h.ok("update_todos", args(json!({"updates": [
            {"index": i64::MIN, "text": "x"},
            {"index": i64::MAX, "text": "y"},
            {"index": -1, "text": "z"},
        ]}))).await;
        assert_eq!(
            s,
            format!("nothing changed: indices {}, {}, -1 are out of range (the plan has 3 steps); use the step numbers of the current plan", i64::MIN, i64::MAX)
        );
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("B, rewritten", 1, true), ("C!", 0, false)]));
        h.cleanup().await;
    }

    async fn update_todos_rejects_duplicates_and_blank_text_whole(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["a", "b", "c"]).await;
        let e = h.fail("update_todos", args(json!({"updates": [
            {"index": 1, "text": "first"},
            {"index": 2, "text": "second"},
            {"index": 1, "text": "again"},
        ]}))).await;
        assert!(e.contains("index 1") && e.contains("more than once"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": [
            {"index": 1, "text": "fine"},
            {"index": 2, "text": "   "},
        ]}))).await;
        assert!(e.contains("updates[1].text") && e.contains("empty"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": []}))).await;
        assert!(e.contains("`updates` is empty"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": [{"index": 1}]}))).await;
        assert!(e.contains("updates[0]") && e.contains("text"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": [{"index": "1", "text": "x"}]}))).await;
        assert!(e.contains("updates[0].index"), "{e}");
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("b", 0, false), ("c", 0, false)]));
        h.cleanup().await;
    }

    async fn remove_todos_takes_sub_steps_along(engine) {
        let h = Harness::new(engine).await;
        seed_outline(&h).await;
        let s = h.ok("remove_todos", args(json!({"indices": [2]}))).await;
        assert_eq!(s, "removed step 2 \"A1\" with 1 sub-step (3 steps left)");
        assert_eq!(plan(&h).await, expect(&[("A", 0, false), ("A2", 1, false), ("B", 0, false)]));
        assert_eq!(list(&h).await, "1. [ ] A\n  2. [ ] A2\n3. [ ] B");
        assert_eq!(positions(&h).await, vec![0, 1, 2]);

        let s = h.ok("remove_todos", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "removed step 1 \"A\" with 1 sub-step (1 step left)");
        assert_eq!(plan(&h).await, expect(&[("B", 0, false)]));
        let s = h.ok("remove_todos", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "removed step 1 \"B\" (0 steps left)");
        assert_eq!(list(&h).await, "(the plan is empty)");
        h.cleanup().await;
    }

    async fn remove_todos_resolves_every_index_up_front(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["one", "two", "three", "four"]).await;
        // Against the plan as it stood: the original 1st and 3rd go, not the 1st and the 4th.
        let s = h.ok("remove_todos", args(json!({"indices": [1, 3]}))).await;
        assert_eq!(s, "removed step 1 \"one\", step 3 \"three\" (2 steps left)");
        assert_eq!(plan(&h).await, expect(&[("two", 0, false), ("four", 0, false)]));
        assert_eq!(positions(&h).await, vec![0, 1]);

        // Given in any order.
        seed_flat(&h, &["five", "six"]).await;
        let s = h.ok("remove_todos", args(json!({"indices": [4, 1, 2]}))).await;
        assert_eq!(s, "removed step 1 \"two\", step 2 \"four\", step 4 \"six\" (1 step left)");
        assert_eq!(plan(&h).await, expect(&[("five", 0, false)]));
        assert_eq!(positions(&h).await, vec![0]);
        h.cleanup().await;
    }

    async fn remove_todos_accepts_a_parent_and_its_child_together(engine) {
        let h = Harness::new(engine).await;
        seed_outline(&h).await;
        let s = h.ok("remove_todos", args(json!({"indices": [3, 1, 2, 3]}))).await;
        assert_eq!(s, "removed step 1 \"A\" with 3 sub-steps (1 step left)");
        assert_eq!(plan(&h).await, expect(&[("B", 0, false)]));

        seed_outline(&h).await; // B, A, A1, A1a, A2, B
        // A1's child A1a, the sibling A2 and the last B, in one call.
        let s = h.ok("remove_todos", args(json!({"indices": [6, 4, 5]}))).await;
        assert_eq!(s, "removed step 4 \"A1a\", step 5 \"A2\", step 6 \"B\" (3 steps left)");
        assert_eq!(plan(&h).await, expect(&[("B", 0, false), ("A", 0, false), ("A1", 1, false)]));
        assert_eq!(positions(&h).await, vec![0, 1, 2]);
        h.cleanup().await;
    }

    async fn remove_todos_reports_out_of_range(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["a", "b", "c"]).await;
        let s = h.ok("remove_todos", args(json!({"indices": [2, 9, 0, -4]}))).await;
        assert_eq!(s, "removed step 2 \"b\" (2 steps left); skipped indices 9, 0, -4: out of range (the plan has 3 steps)");
        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("c", 0, false)]));

        let before = h.state().await;
        let s = h.ok("remove_todos", args(json!({"indices": [3, i64::MAX]}))).await;
        assert_eq!(s, format!("nothing changed: indices 3, {} are out of range (the plan has 2 steps); use the step numbers of the current plan", i64::MAX));
        h.assert_only_marked_since(&before).await;

        let e = h.fail("remove_todos", args(json!({"indices": []}))).await;
        assert!(e.contains("`indices` is empty"), "{e}");
        h.cleanup().await;
    }

    async fn mixed_adds_and_removes_keep_the_plan_dense_and_ordered(engine) {
        let h = Harness::new(engine).await;
        seed_outline(&h).await; // A, A1, A1a, A2, B
        h.ok("remove_todos", args(json!({"indices": [3]}))).await; // A, A1, A2, B
        h.ok("add_todos", args(json!({"parent_index": 2, "steps": steps(&[("N1", 0), ("N2", 0)])}))).await; // A, A1, N1, N2, A2, B
        h.ok("add_todos", args(json!({"steps": steps(&[("C", 0), ("C1", 1)])}))).await; // …, C, C1
        h.ok("remove_todos", args(json!({"indices": [1, 7]}))).await; // B (A and C take their sub-steps)
        h.ok("add_todos", args(json!({"parent_index": 1, "steps": steps(&[("B1", 0)])}))).await; // B, B1
        h.ok("add_todos", args(json!({"steps": steps(&[("D", 0)])}))).await; // B, B1, D
        h.ok("remove_todos", args(json!({"indices": [2]}))).await; // B, D
        h.ok("add_todos", args(json!({"parent_index": 1, "steps": steps(&[("B2", 0), ("B2a", 1)])}))).await;

        let expected = "1. [ ] B\n  2. [ ] B2\n    3. [ ] B2a\n4. [ ] D";
        assert_eq!(list(&h).await, expected);
        assert_eq!(positions(&h).await, vec![0, 1, 2, 3]);

        // Every index 1..n names exactly the step listed under it.
        h.ok("toggle_todos", args(json!({"indices": [1, 2, 3, 4]}))).await;
        assert_eq!(list(&h).await, expected.replace("[ ]", "[x]"));
        h.ok("update_todos", args(json!({"updates": [{"index": 4, "text": "D2"}]}))).await;
        assert_eq!(plan(&h).await.last().unwrap().0, "D2");
        h.cleanup().await;
    }

    async fn plan_tools_reject_malformed_arguments_without_writing(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["a", "b"]).await;

        let e = h.fail("toggle_todos", args(json!({"indices": "1"}))).await;
        assert!(e.contains("indices") && e.contains("sequence"), "{e}");
        let e = h.fail("remove_todos", args(json!({"indices": [1, "2"]}))).await;
        assert!(e.contains("indices[1]"), "{e}");
        let e = h.fail("remove_todos", args(json!({"indices": 1}))).await;
        assert!(e.contains("indices"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": {}}))).await;
        assert!(e.contains("steps") && e.contains("sequence"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": ["just text"]}))).await;
        assert!(e.contains("steps[0]"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": {"index": 1, "text": "x"}}))).await;
        assert!(e.contains("updates"), "{e}");

        // Missing fields.
        let e = h.fail("add_todos", args(json!({}))).await;
        assert!(e.contains("missing field `steps`"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"depth": 0}]}))).await;
        assert!(e.contains("steps[0]") && e.contains("missing field `text`"), "{e}");
        let e = h.fail("toggle_todos", args(json!({}))).await;
        assert!(e.contains("missing field `indices`"), "{e}");
        let e = h.fail("remove_todos", args(json!({}))).await;
        assert!(e.contains("missing field `indices`"), "{e}");
        let e = h.fail("update_todos", args(json!({}))).await;
        assert!(e.contains("missing field `updates`"), "{e}");

        // Unknown fields, at the top and inside an item.
        let e = h.fail("add_todos", args(json!({"steps": steps(&[("x", 0)]), "position": 1}))).await;
        assert!(e.contains("unknown field `position`"), "{e}");
        let e = h.fail("add_todos", args(json!({"steps": [{"text": "x", "done": true}]}))).await;
        assert!(e.contains("steps[0]") && e.contains("unknown field `done`"), "{e}");
        let e = h.fail("toggle_todos", args(json!({"indices": [1], "done": true}))).await;
        assert!(e.contains("unknown field `done`"), "{e}");
        let e = h.fail("update_todos", args(json!({"updates": [{"index": 1, "text": "x", "depth": 1}]}))).await;
        assert!(e.contains("unknown field `depth`"), "{e}");
        let e = h.fail("list_todos", args(json!({"verbose": true}))).await;
        assert!(e.contains("verbose"), "{e}");

        // action_and_reasoning is required on every plan tool, even the read-only one.
        for (tool, fields) in [
            ("add_todos", json!({"steps": steps(&[("x", 0)])})),
            ("toggle_todos", json!({"indices": [1]})),
            ("update_todos", json!({"updates": [{"index": 1, "text": "x"}]})),
            ("remove_todos", json!({"indices": [1]})),
            ("list_todos", json!({})),
        ] {
            let e = h.fail(tool, fields).await;
            assert!(e.contains("action_and_reasoning"), "{tool}: {e}");
        }
        let e = h.fail("add_todos", json!({"action_and_reasoning": "", "steps": steps(&[("x", 0)])})).await;
        assert!(e.contains("action_and_reasoning") && e.contains("empty"), "{e}");

        assert_eq!(plan(&h).await, expect(&[("a", 0, false), ("b", 0, false)]));
        h.cleanup().await;
    }
}

/// The plan as replayed from the history at its latest revision: what the recorded insert
/// indices say it is.
async fn replayed(h: &Harness) -> Vec<(String, i64, bool)> {
    let workspaces = h.runtime.workspaces();
    let latest = workspaces
        .history(&h.thread, None, Some(1))
        .await
        .unwrap()
        .revisions[0]
        .rev;
    workspaces
        .workspace_at(&h.thread, latest)
        .await
        .unwrap()
        .plan
        .into_iter()
        .map(|t| (t.text, t.depth, t.done))
        .collect()
}

// Steps are ordered by sparse keys; these fill one gap until it is used up, so the plan is
// renumbered mid-way, and check that order, indices and the history stay right throughout.
backend_tests! {
    async fn many_outlines_nested_under_one_step_keep_their_order(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["A", "B"]).await;
        // Each one lands after A's last sub-step, in the ever smaller gap before B.
        for i in 0..80 {
            let s = h.ok("add_todos", args(json!({"steps": steps(&[(&format!("c{i}"), 0)]), "parent_index": 1}))).await;
            assert_eq!(s, format!("added 1 step under step 1 \"A\" (the plan now has {} steps)", i + 3));
        }
        let mut want = vec![("A".to_string(), 0, false)];
        want.extend((0..80).map(|i| (format!("c{i}"), 1, false)));
        want.push(("B".to_string(), 0, false));
        assert_eq!(plan(&h).await, want);
        assert_eq!(replayed(&h).await, want);
        assert_eq!(positions(&h).await, (0..82).collect::<Vec<i64>>());
        // Indices still name the right steps after the renumbering.
        assert_eq!(h.ok("toggle_todos", args(json!({"indices": [82, 41]}))).await, "marked done: 82, 41");
        let s = h.ok("remove_todos", args(json!({"indices": [2]}))).await;
        assert_eq!(s, "removed step 2 \"c0\" (81 steps left)");
        let listing = list(&h).await;
        let lines: Vec<&str> = listing.lines().collect();
        assert_eq!(lines[0], "1. [ ] A");
        assert_eq!(lines[1], "  2. [ ] c1");
        assert_eq!(lines[39], "  40. [x] c39");
        assert_eq!(lines.len(), 81);
        assert_eq!(lines[79], "  80. [ ] c79");
        assert_eq!(lines[80], "81. [x] B");
        assert_eq!(replayed(&h).await, plan(&h).await);
        h.cleanup().await;
    }

    async fn appending_when_the_last_key_is_at_its_ceiling_renumbers(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["A", "B"]).await;
        // Push B's key to where no gap fits after it (keys stay below i64::MAX / 4): the
        // one-statement append inserts nothing, and the add renumbers the plan instead.
        let sql = format!(
            "UPDATE todos SET sort_key = {} WHERE thread_id = '{}' AND text = 'B'",
            i64::MAX / 4 - 1,
            h.thread.as_str()
        );
        match h.db() {
            Database::Sqlite { writer, .. } => {
                let held = writer.begin().await.unwrap();
                held.inline().unwrap().execute(&sql, []).unwrap();
                held.commit().await.unwrap();
            }
            Database::Postgres { pool, .. } => {
                sqlx::query(&sql).execute(pool).await.unwrap();
            }
        }
        let s = h.ok("add_todos", args(json!({"steps": steps(&[("C", 0), ("C1", 1)])}))).await;
        assert_eq!(s, "added 2 steps at the end of the plan (the plan now has 4 steps)");
        let want = expect(&[("A", 0, false), ("B", 0, false), ("C", 0, false), ("C1", 1, false)]);
        assert_eq!(plan(&h).await, want);
        assert_eq!(replayed(&h).await, want);
        assert_eq!(positions(&h).await, (0..4).collect::<Vec<i64>>());
        // And the next append finds room again.
        h.ok("add_todos", args(json!({"steps": steps(&[("D", 0)])}))).await;
        assert_eq!(list(&h).await.lines().last(), Some("5. [ ] D"));
        assert_eq!(replayed(&h).await, plan(&h).await);
        h.cleanup().await;
    }

    async fn large_outlines_in_one_gap_renumber_and_keep_their_order(engine) {
        let h = Harness::new(engine).await;
        seed_flat(&h, &["A", "B"]).await;
        // 300 steps split a gap 301 ways: the fourth batch finds no room and renumbers.
        for batch in 0..5 {
            let list: Vec<(String, i64)> = (0..300).map(|i| (format!("b{batch}-{i}"), 0)).collect();
            let list: Vec<(&str, i64)> = list.iter().map(|(t, d)| (t.as_str(), *d)).collect();
            h.ok("add_todos", args(json!({"steps": steps(&list), "parent_index": 1}))).await;
        }
        let texts: Vec<String> = plan(&h).await.into_iter().map(|(t, _, _)| t).collect();
        let mut want = vec!["A".to_string()];
        for batch in 0..5 {
            want.extend((0..300).map(|i| format!("b{batch}-{i}")));
        }
        want.push("B".to_string());
        assert_eq!(texts, want);
        assert_eq!(replayed(&h).await, plan(&h).await);
        assert_eq!(positions(&h).await, (0..1502).collect::<Vec<i64>>());
        assert_eq!(
            h.ok("update_todos", args(json!({"updates": [{"index": 902, "text": "middle"}]}))).await,
            "rewrote steps 902"
        );
        assert_eq!(plan(&h).await[901].0, "middle");
        // Removing A takes every nested step with it.
        let s = h.ok("remove_todos", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "removed step 1 \"A\" with 1500 sub-steps (1 step left)");
        assert_eq!(list(&h).await, "1. [ ] B");
        assert_eq!(replayed(&h).await, plan(&h).await);
        h.cleanup().await;
    }

    async fn a_person_adding_after_one_step_again_and_again_keeps_the_order(engine) {
        use haico::workspace::StepPlacement;
        let h = Harness::new(engine).await;
        seed_flat(&h, &["A", "B"]).await;
        let a = h.workspace().await.plan[0].id;
        let workspaces = h.runtime.workspaces();
        // Each new step goes right after A, ahead of the one added before it: one gap, halved
        // every time, until the plan is renumbered.
        for i in 0..70 {
            workspaces.plan(&h.thread).add_step(&format!("n{i}"), StepPlacement::After(a)).await.unwrap();
        }
        let mut want = vec![("A".to_string(), 0, false)];
        want.extend((0..70).rev().map(|i| (format!("n{i}"), 0, false)));
        want.push(("B".to_string(), 0, false));
        assert_eq!(plan(&h).await, want);
        assert_eq!(replayed(&h).await, want);
        assert_eq!(positions(&h).await, (0..72).collect::<Vec<i64>>());
        let listing = list(&h).await;
        assert!(listing.starts_with("1. [ ] A\n2. [ ] n69\n3. [ ] n68\n"), "{listing}");
        assert!(listing.ends_with("71. [ ] n0\n72. [ ] B"), "{listing}");
        h.cleanup().await;
    }
}
