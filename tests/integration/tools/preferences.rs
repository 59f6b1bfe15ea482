//! Preference tools (`add_preferences`, `update_preferences`, `remove_preferences`,
//! `list_preferences`) and the lock rule, on SQLite and PostgreSQL.

use crate::common;

use common::Harness;
use haico::panels::PreferenceKind;
use haico::store::{Preference, PreferencePatch, WriteOutcome};
use serde_json::{Value, json};

/// `fields` plus the `action_and_reasoning` every call must carry.
fn args(fields: Value) -> Value {
    let mut map = match fields {
        Value::Object(map) => map,
        other => panic!("test arguments must be an object, got {other}"),
    };
    map.insert(
        "action_and_reasoning".into(),
        json!("Note what the user wants."),
    );
    Value::Object(map)
}

async fn prefs(h: &Harness) -> Vec<Preference> {
    h.workspace().await.preferences
}

async fn list(h: &Harness) -> String {
    h.ok("list_preferences", args(json!({}))).await
}

/// Locks (or unlocks) the preference with `id` the way the user does: through the user path,
/// which ignores locks.
async fn set_locked(h: &Harness, id: i64, locked: bool) {
    let mut repo = h.db().begin_write().await.unwrap();
    let patch = PreferencePatch {
        locked: Some(locked),
        ..Default::default()
    };
    let (outcome, row) = repo
        .preferences()
        .update_preference(&h.thread, id, &patch, false)
        .await
        .unwrap();
    assert_eq!(outcome, WriteOutcome::Applied);
    assert_eq!(row.unwrap().locked, locked);
    repo.commit().await.unwrap();
}

/// Budget (hard, with subtitle), Beach (soft), Quiet (hard).
async fn seed(h: &Harness) -> Vec<Preference> {
    let s = h
        .ok(
            "add_preferences",
            args(json!({"items": [
                {"title": "Budget under 2,000 EUR", "subtitle": "for two people", "kind": "hard"},
                {"title": "Near a beach"},
                {"title": "Quiet hotel", "kind": "hard"},
            ]})),
        )
        .await;
    assert_eq!(s, "recorded 3 preferences");
    prefs(h).await
}

backend_tests! {
    async fn add_preferences_records_unlocked_with_soft_by_default(engine) {
        let h = Harness::new(engine).await;
        assert_eq!(list(&h).await, "(no preferences recorded yet)");

        let s = h.ok("add_preferences", args(json!({"items": [
            {"title": "  Vegetarian food  ", "subtitle": "  the whole group  "},
            {"title": "Direct flights", "kind": "hard"},
        ]}))).await;
        assert_eq!(s, "recorded 2 preferences");
        let s = h.ok("add_preferences", args(json!({"items": [{"title": "Late check-out", "subtitle": "   ", "kind": "soft"}]}))).await;
        assert_eq!(s, "recorded 1 preference");

        let p = prefs(&h).await;
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].title.as_str(), p[0].subtitle.as_deref(), p[0].kind, p[0].locked),
                   ("Vegetarian food", Some("the whole group"), PreferenceKind::Soft, false));
        assert_eq!((p[1].title.as_str(), p[1].subtitle.as_deref(), p[1].kind, p[1].locked),
                   ("Direct flights", None, PreferenceKind::Hard, false));
        // A blank subtitle is no subtitle.
        assert_eq!((p[2].title.as_str(), p[2].subtitle.as_deref(), p[2].kind),
                   ("Late check-out", None, PreferenceKind::Soft));

        assert_eq!(
            list(&h).await,
            "#1 [soft] Vegetarian food — the whole group\n#2 [hard] Direct flights\n#3 [soft] Late check-out"
        );
        h.cleanup().await;
    }

    async fn list_preferences_marks_locked_ones(engine) {
        let h = Harness::new(engine).await;
        let p = seed(&h).await;
        set_locked(&h, p[0].id, true).await;
        set_locked(&h, p[2].id, true).await;
        assert_eq!(
            list(&h).await,
            "#1 [hard] Budget under 2,000 EUR — for two people (locked)\n#2 [soft] Near a beach\n#3 [hard] Quiet hotel (locked)"
        );
        set_locked(&h, p[0].id, false).await;
        assert!(list(&h).await.starts_with("#1 [hard] Budget under 2,000 EUR — for two people\n"));
        h.cleanup().await;
    }

    async fn update_preferences_applies_title_subtitle_and_kind(engine) {
        let h = Harness::new(engine).await;
        let before = seed(&h).await;

        let s = h.ok("update_preferences", args(json!({"updates": [
            {"index": 2, "title": "Walking distance to a beach", "subtitle": "under 10 minutes"},
            {"index": 3, "kind": "soft"},
        ]}))).await;
        // Targets are named as they were when the call started.
        assert_eq!(s, "updated #2 \"Near a beach\", #3 \"Quiet hotel\"");
        let p = prefs(&h).await;
        assert_eq!(p[0], before[0]);
        assert_eq!((p[1].id, p[1].title.as_str(), p[1].subtitle.as_deref(), p[1].kind),
                   (before[1].id, "Walking distance to a beach", Some("under 10 minutes"), PreferenceKind::Soft));
        assert_eq!((p[2].title.as_str(), p[2].subtitle.as_deref(), p[2].kind),
                   ("Quiet hotel", None, PreferenceKind::Soft));

        // An empty subtitle clears it; fields left out stay.
        let s = h.ok("update_preferences", args(json!({"updates": [{"index": 1, "subtitle": ""}]}))).await;
        assert_eq!(s, "updated #1 \"Budget under 2,000 EUR\"");
        let p = prefs(&h).await;
        assert_eq!((p[0].title.as_str(), p[0].subtitle.as_deref(), p[0].kind),
                   ("Budget under 2,000 EUR", None, PreferenceKind::Hard));
        assert_eq!(
            list(&h).await,
            "#1 [hard] Budget under 2,000 EUR\n#2 [soft] Walking distance to a beach — under 10 minutes\n#3 [soft] Quiet hotel"
        );
        h.cleanup().await;
    }

    async fn update_preferences_skips_and_reports_locked_targets(engine) {
        let h = Harness::new(engine).await;
        let before = seed(&h).await;
        set_locked(&h, before[0].id, true).await;
        let locked_row = prefs(&h).await[0].clone();
        assert!(locked_row.locked);

        let s = h.ok("update_preferences", args(json!({"updates": [
            {"index": 1, "title": "No budget", "kind": "soft", "subtitle": ""},
            {"index": 2, "kind": "hard"},
            {"index": 5, "kind": "hard"},
        ]}))).await;
        assert_eq!(
            s,
            "updated #2 \"Near a beach\"; skipped #1 \"Budget under 2,000 EUR\": locked by the user — ask the \
             person to unlock it; skipped index 5: out of range (the list has 3 preferences)"
        );
        let p = prefs(&h).await;
        assert_eq!(p[0], locked_row);
        assert_eq!(p[1].kind, PreferenceKind::Hard);

        // Nothing applied: still says which ones were locked.
        let after = h.state().await;
        let s = h.ok("update_preferences", args(json!({"updates": [{"index": 1, "title": "Anything"}]}))).await;
        assert_eq!(s, "nothing changed: #1 \"Budget under 2,000 EUR\" is locked by the user — ask the person to unlock it");
        h.assert_only_marked_since(&after).await;

        // Once the user unlocks it, the agent may change it.
        set_locked(&h, before[0].id, false).await;
        let s = h.ok("update_preferences", args(json!({"updates": [{"index": 1, "title": "Anything"}]}))).await;
        assert_eq!(s, "updated #1 \"Budget under 2,000 EUR\"");
        assert_eq!(prefs(&h).await[0].title, "Anything");
        h.cleanup().await;
    }

    async fn remove_preferences_skips_locked_and_removes_the_rest(engine) {
        let h = Harness::new(engine).await;
        let before = seed(&h).await;
        set_locked(&h, before[1].id, true).await;

        let s = h.ok("remove_preferences", args(json!({"indices": [3, 2, 1, 1, 0, 4]}))).await;
        assert_eq!(
            s,
            "removed #3 \"Quiet hotel\", #1 \"Budget under 2,000 EUR\"; skipped #2 \"Near a beach\": locked by the \
             user — ask the person to unlock it; skipped indices 0, 4: out of range (the list has 3 preferences)"
        );
        let p = prefs(&h).await;
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].id, p[0].title.as_str(), p[0].locked), (before[1].id, "Near a beach", true));
        assert_eq!(list(&h).await, "#1 [soft] Near a beach (locked)");

        let after = h.state().await;
        let s = h.ok("remove_preferences", args(json!({"indices": [1, 2]}))).await;
        assert_eq!(
            s,
            "nothing changed: #1 \"Near a beach\" is locked by the user — ask the person to unlock it; index 2 is \
             out of range (the list has 1 preference); use the numbers of the current list"
        );
        h.assert_only_marked_since(&after).await;

        set_locked(&h, before[1].id, false).await;
        let s = h.ok("remove_preferences", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "removed #1 \"Near a beach\"");
        assert_eq!(list(&h).await, "(no preferences recorded yet)");
        h.cleanup().await;
    }

    async fn out_of_range_only_finds_nothing(engine) {
        let h = Harness::new(engine).await;
        let s = h.ok("remove_preferences", args(json!({"indices": [1]}))).await;
        assert_eq!(s, "nothing changed: index 1 is out of range (the list is empty); use the numbers of the current list");
        seed(&h).await;
        let before = h.state().await;
        let s = h.ok("update_preferences", args(json!({"updates": [
            {"index": 0, "kind": "hard"},
            {"index": i64::MIN, "kind": "hard"},
            {"index": i64::MAX, "title": "x"},
        ]}))).await;
        assert_eq!(
            s,
            format!("nothing changed: indices 0, {}, {} are out of range (the list has 3 preferences); use the numbers of the current list", i64::MIN, i64::MAX)
        );
        let s = h.ok("remove_preferences", args(json!({"indices": [-1, 4]}))).await;
        assert_eq!(s, "nothing changed: indices -1, 4 are out of range (the list has 3 preferences); use the numbers of the current list");
        h.assert_only_marked_since(&before).await;
        h.cleanup().await;
    }

    async fn preference_tools_reject_bad_input_without_writing(engine) {
        let h = Harness::new(engine).await;
        seed(&h).await;

        // Updates that change nothing, or change one target twice.
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 1}]}))).await;
        assert!(e.contains("updates[0]") && e.contains("changes nothing"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 2, "kind": "hard"}, {"index": 1}]}))).await;
        assert!(e.contains("updates[1]") && e.contains("changes nothing"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 2, "kind": "hard"}, {"index": 2, "title": "x"}]}))).await;
        assert!(e.contains("index 2") && e.contains("more than once"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 2, "title": "  "}]}))).await;
        assert!(e.contains("updates[0].title") && e.contains("empty"), "{e}");

        // Unknown kinds.
        let e = h.fail("add_preferences", args(json!({"items": [{"title": "x", "kind": "medium"}]}))).await;
        assert!(e.contains("items[0].kind") && e.contains("medium"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 1, "kind": "medium"}]}))).await;
        assert!(e.contains("updates[0].kind") && e.contains("medium"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"title": "x", "kind": "Hard"}]}))).await;
        assert!(e.contains("items[0].kind"), "{e}");

        // Empty batches and blank titles.
        let e = h.fail("add_preferences", args(json!({"items": []}))).await;
        assert!(e.contains("`items` is empty"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": []}))).await;
        assert!(e.contains("`updates` is empty"), "{e}");
        let e = h.fail("remove_preferences", args(json!({"indices": []}))).await;
        assert!(e.contains("`indices` is empty"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"title": "fine"}, {"title": ""}]}))).await;
        assert!(e.contains("items[1].title") && e.contains("empty"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"title": "x".repeat(301)}]}))).await;
        assert!(e.contains("items[0].title") && e.contains("300"), "{e}");

        // Wrong types, missing and unknown fields.
        let e = h.fail("add_preferences", args(json!({"items": {"title": "x"}}))).await;
        assert!(e.contains("items") && e.contains("sequence"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"title": 7}]}))).await;
        assert!(e.contains("items[0].title"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"subtitle": "no title"}]}))).await;
        assert!(e.contains("missing field `title`"), "{e}");
        let e = h.fail("add_preferences", args(json!({"items": [{"title": "x", "locked": true}]}))).await;
        assert!(e.contains("unknown field `locked`"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": 1, "locked": false}]}))).await;
        assert!(e.contains("unknown field `locked`"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"index": "1", "kind": "hard"}]}))).await;
        assert!(e.contains("updates[0].index"), "{e}");
        let e = h.fail("update_preferences", args(json!({"updates": [{"title": "x"}]}))).await;
        assert!(e.contains("missing field `index`"), "{e}");
        let e = h.fail("remove_preferences", args(json!({"indices": "1"}))).await;
        assert!(e.contains("indices"), "{e}");
        let e = h.fail("remove_preferences", args(json!({}))).await;
        assert!(e.contains("missing field `indices`"), "{e}");
        let e = h.fail("list_preferences", args(json!({"all": true}))).await;
        assert!(e.contains("all"), "{e}");
        let e = h.fail("add_preferences", json!({"items": [{"title": "x"}]})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");
        let e = h.fail("list_preferences", json!({})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");

        assert_eq!(prefs(&h).await.len(), 3);
        h.cleanup().await;
    }
}
