//! Unit tests of the prompt: the instructions, the snapshot's sections and their budgets.

use super::*;
use haico_store::panels::PreferenceKind;
use haico_store::{Document, PlanStep, Preference};

fn workspace() -> Workspace {
    Workspace {
        objective: Some("Plan a trip".into()),
        document: Some(Document {
            title: "Trip".into(),
            content: "Day 1".into(),
            version: 1,
        }),
        plan: vec![
            PlanStep {
                id: 1,
                text: "Book".into(),
                depth: 0,
                done: true,
            },
            PlanStep {
                id: 2,
                text: "Flights".into(),
                depth: 1,
                done: false,
            },
        ],
        preferences: vec![Preference {
            id: 1,
            title: "Budget".into(),
            subtitle: Some("under 2k".into()),
            kind: PreferenceKind::Hard,
            locked: true,
        }],
        artifacts: Vec::new(),
    }
}

#[test]
fn the_instructions_hold_nothing_of_the_workspace() {
    // The head must be the same for every thread: no panel may leak into it.
    assert!(!instructions().contains("<objective>"));
    assert!(!instructions().contains("<document"));
    assert!(
        snapshot(&PromptWorkspace::from_workspace(
            &workspace(),
            &PromptBudget::default()
        ))
        .starts_with(SNAPSHOT_PREAMBLE)
    );
}

#[test]
fn shows_every_panel() {
    let prompt = snapshot(&PromptWorkspace::from_workspace(
        &workspace(),
        &PromptBudget::default(),
    ));
    assert!(prompt.contains("<objective>\nPlan a trip\n</objective>"));
    assert!(prompt.contains("#1 [hard] Budget — under 2k (locked)"));
    assert!(prompt.contains("1. [x] Book\n  2. [ ] Flights"));
    assert!(prompt.contains("<document title=\"Trip\">\nDay 1\n</document>"));
    assert!(prompt.contains("(no artifacts yet)"));
}

#[test]
fn cuts_long_documents_and_says_so() {
    let mut ws = workspace();
    if let Some(doc) = ws.document.as_mut() {
        doc.content = format!("{}{}", "é".repeat(500), "ü".repeat(500));
    }
    let budget = PromptBudget {
        document_chars: 99,
        ..PromptBudget::default()
    };
    let prompt = snapshot(&PromptWorkspace::from_workspace(&ws, &budget));
    assert!(prompt.contains("901 characters of the document omitted here; it is 1000"));
    assert_eq!(prompt.chars().filter(|c| *c == 'é').count(), 66);
    assert_eq!(prompt.chars().filter(|c| *c == 'ü').count(), 33);
    let whole = snapshot(&PromptWorkspace::from_workspace(&workspace(), &budget));
    assert!(whole.contains("<document title=\"Trip\">\nDay 1\n</document>"));
}

#[test]
fn cuts_long_plans_and_says_so() {
    let mut ws = workspace();
    ws.plan = (0..10)
        .map(|i| PlanStep {
            id: i,
            text: format!("s{i}"),
            depth: 0,
            done: i % 2 == 0,
        })
        .collect();
    let prompt = snapshot(&PromptWorkspace::from_workspace(
        &ws,
        &PromptBudget {
            plan_steps: 4,
            ..PromptBudget::default()
        },
    ));
    assert!(prompt.contains("4. [ ] s3"));
    assert!(!prompt.contains("s4"));
    assert!(prompt.contains("6 more steps not shown (3 of them done)"));
}
