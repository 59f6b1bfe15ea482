//! One handle per part of a workspace, so each operation has one home named after what it
//! changes: `edit.plan().toggle(…)` inside an open [`Edit`] (an agent's call, or a person's
//! change being built), `workspaces.plan(&thread).plan(…).add_step()` for a person's one-shot change
//! (checked, written, committed and announced, or an error that wrote nothing).
//!
//! A handle only borrows: it holds no state of its own and costs nothing to make. The
//! operations themselves live beside their rules, in each part's module (`plan.rs`,
//! `preferences.rs`, …).

use crate::{workspace::edit::Edit, workspace::service::Workspaces};
use haico_store::ThreadId;

/// Declares a handle over an open [`Edit`] and the `Edit` method that makes it.
macro_rules! edit_handles {
    ($($(#[$doc:meta])* $method:ident => $handle:ident;)*) => {
        $(
            $(#[$doc])*
            pub struct $handle<'e> {
                pub(super) edit: &'e mut Edit,
            }
        )*
        impl Edit {
            $(
                $(#[$doc])*
                pub fn $method(&mut self) -> $handle<'_> {
                    $handle { edit: self }
                }
            )*
        }
    };
}

/// Declares a handle over one thread of [`Workspaces`] and the method that makes it.
macro_rules! thread_handles {
    ($($(#[$doc:meta])* $method:ident => $handle:ident;)*) => {
        $(
            $(#[$doc])*
            pub struct $handle<'w> {
                pub(super) workspaces: &'w Workspaces,
                pub(super) thread: &'w ThreadId,
            }
        )*
        impl Workspaces {
            $(
                $(#[$doc])*
                pub fn $method<'w>(&'w self, thread: &'w ThreadId) -> $handle<'w> {
                    $handle { workspaces: self, thread }
                }
            )*
        }
    };
}

edit_handles! {
    /// The objective, as this edit changes it.
    objective => ObjectiveEdit;
    /// The document, as this edit changes it (directly, or as a suggestion in suggest mode).
    document => DocumentEdit;
    /// The plan, as this edit changes it: by 1-based position (the agent) or by step id.
    plan => PlanEdit;
    /// The preferences, as this edit changes them: by 1-based position (the agent) or by id.
    preferences => PreferencesEdit;
    /// The artifacts this edit adds.
    artifacts => ArtifactsEdit;
}

thread_handles! {
    /// One thread's objective, read or set by a person.
    objective => ThreadObjective;
    /// One thread's document, read or replaced by a person.
    document => ThreadDocument;
    /// One thread's plan, read or changed step by step by a person.
    plan => ThreadPlan;
    /// One thread's preferences, read or changed by a person (locks do not stop a person).
    preferences => ThreadPreferences;
    /// One thread's charts and other artifacts, as the agent made them.
    artifacts => ThreadArtifacts;
    /// One thread's suggestions: listed, accepted or rejected by a person.
    suggestions => ThreadSuggestions;
}

/// Every thread: made, found, listed, changed and deleted.
pub struct Threads<'w> {
    pub(super) workspaces: &'w Workspaces,
}

impl Workspaces {
    /// Every thread: made, found, listed, changed and deleted.
    pub fn threads(&self) -> Threads<'_> {
        Threads { workspaces: self }
    }
}
