//! The guard against an agent's whole rewrite dropping most of the person's document
//! (`workspace::document::loss`), on SQLite and PostgreSQL: in direct mode such an
//! `update_document` fails and changes nothing, `replace_all: true` applies it, suggest mode
//! proposes it as usual, and applied in a turn it is one revision that undoing the turn takes
//! back.

use crate::common;

use common::{
    Harness,
    agent::{Setup, whole_turn},
    mock_llm::{Script, call},
    server::{setup, teardown},
};
use reqwest::Method;
use serde_json::{Value, json};

/// A short letter: 560 characters, 110 words, four paragraphs.
const LETTER: &str = "Dear Ms Keller,\n\n\
    Thank you for your offer of 12 March for the renovation of our kitchen. We have read it \
    carefully and would like to accept it, with two changes.\n\n\
    First, the new worktop should be oak rather than laminate, as we discussed on the phone. \
    Second, we would like the work to start on 3 June instead of 27 May, because we are away \
    the week before.\n\n\
    Please send us a revised offer with these changes, and let us know whether the total of \
    8,400 EUR still holds. We are happy to pay the deposit as soon as we have it.\n\n\
    Kind regards,\nAnna and Tom Berger\n";

/// What a small model answered a request for one correction with: 44 characters.
const FRAGMENT: &str = "Second, the work should start on 10th June.\n";

fn why(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Correct the start date in the letter.");
    args
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

backend_tests! {
    async fn a_rewrite_that_drops_most_of_the_document_is_refused(engine) {
        let h = Harness::new(engine).await;
        assert_eq!((chars(LETTER), chars(FRAGMENT)), (560, 44));
        // Writing the first document drops nothing.
        h.ok("update_document", why(json!({"title": "Letter", "content": LETTER}))).await;

        // The fragment in place of the letter: refused, nothing written (`fail` checks it).
        let e = h.fail("update_document", why(json!({"content": FRAGMENT}))).await;
        assert!(
            e.starts_with(
                "invalid arguments: update_document would drop most of the document: it has 560 \
                 characters and 110 words, and the new content (44 characters) keeps only"
            ),
            "{e}"
        );
        assert!(e.contains("It would lose, for example, \"Dear Ms Keller,\" and \"Thank you"), "{e}");
        assert!(e.contains("Nothing was changed. To change part of the document use edit_document"), "{e}");
        assert!(e.ends_with("call update_document again with replace_all: true."), "{e}");
        // Emptying it, or saying replace_all: false, is the same.
        h.fail("update_document", why(json!({"content": ""}))).await;
        h.fail("update_document", why(json!({"content": FRAGMENT, "replace_all": false}))).await;

        // A correction goes through edit_document; a rewrite that keeps most of it passes.
        let s = h.ok("edit_document", why(json!({"edits": [{"old_text": "3 June", "new_text": "10 June"}]}))).await;
        assert_eq!(s, "applied 1 edit (561 chars)");
        let shorter = LETTER.replace(
            "Please send us a revised offer with these changes, and let us know whether the total of \
             8,400 EUR still holds. We are happy to pay the deposit as soon as we have it.\n\n",
            "",
        );
        let s = h.ok("update_document", why(json!({"content": shorter}))).await;
        assert_eq!(s, format!("document updated ({} chars)", chars(&shorter)));

        // Asked for on purpose, the replacement is written; the title stays.
        let s = h.ok("update_document", why(json!({"content": FRAGMENT, "replace_all": true}))).await;
        assert_eq!(s, "document updated (44 chars)");
        let doc = h.workspace().await.document.unwrap();
        assert_eq!((doc.title.as_str(), doc.content.as_str(), doc.version), ("Letter", FRAGMENT, 4));

        // The same content and title again: a success that says nothing changed, and writes
        // nothing.
        let before = h.state().await;
        let record = h.call_full("update_document", why(json!({"content": FRAGMENT, "title": " Letter "}))).await;
        assert_eq!(
            record.envelope.summary.as_deref(),
            Some("nothing changed: the document already has exactly this content and title (44 chars)")
        );
        assert!(record.envelope.success && record.changed.is_empty());
        h.assert_only_marked_since(&before).await;
        // A new title alone is a change.
        let s = h.ok("update_document", why(json!({"content": FRAGMENT, "title": "Note"}))).await;
        assert_eq!(s, "document updated (44 chars)");
        h.cleanup().await;
    }

    async fn suggest_mode_proposes_the_rewrite_for_the_person_to_decide(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        server.tool_ok("t", "update_document", why(json!({"content": LETTER}))).await;
        server.patch("/api/threads/t", &json!({"document_mode": "suggest"})).await.expect(200);
        let s = server.tool_ok("t", "update_document", why(json!({"content": FRAGMENT}))).await;
        assert!(s.starts_with("suggested #1: the document is unchanged"), "{s}");
        assert_eq!(server.workspace("t").await["document"]["content"], json!(LETTER));
        teardown(tdb, server).await;
    }

    async fn an_applied_rewrite_is_one_revision_that_undoing_the_turn_takes_back(engine) {
        let setup = Setup::openai(engine, vec![
            Script::tool_calls(vec![call("update_document", why(json!({"content": FRAGMENT})))]),
            Script::tool_calls(vec![call(
                "update_document",
                why(json!({"content": FRAGMENT, "replace_all": true})),
            )]),
            Script::text("I replaced the letter."),
        ])
        .await;
        let server = &setup.server;
        server.create_thread("t").await;
        server
            .request(Method::PUT, "/api/threads/t/document", Some(&json!({"content": LETTER, "title": "Letter"})))
            .await
            .expect(200);
        let frames = whole_turn(setup.chat("t", "The work starts on 10 June.").await).await;
        assert_eq!(frames.last().unwrap().event, "done");

        // The model read the refusal, then the replacement.
        let requests = setup.mock.requests();
        let results: Vec<Value> = requests.last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == json!("tool"))
            .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
            .collect();
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(results[0]["success"], json!(false));
        assert!(results[0]["error"].as_str().unwrap().contains("replace_all: true"), "{results:?}");
        assert_eq!(results[1], json!({"success": true, "summary": "document updated (44 chars)"}));
        assert_eq!(server.workspace("t").await["document"]["content"], json!(FRAGMENT));

        // The refused call made no revision; the applied one is one, of turn 1.
        let page = server.get("/api/threads/t/history").await.expect(200);
        let revisions = page["revisions"].as_array().unwrap();
        assert_eq!(revisions.len(), 2, "{page}");
        let rewrite = &revisions[0];
        assert_eq!(
            (&rewrite["tool"], &rewrite["turn_index"], &rewrite["panels"]),
            (&json!("update_document"), &json!(1), &json!(["document"]))
        );

        // Undoing the turn gives the person the letter back, in one step.
        let undone = server.post("/api/threads/t/turns/1/revert", &json!({})).await.expect(200);
        assert_eq!(undone["workspace"]["document"]["content"], json!(LETTER));
        assert_eq!(undone["workspace"]["document"]["title"], json!("Letter"));
        setup.cleanup().await;
    }
}
