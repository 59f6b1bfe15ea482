//! Studies (issue 42, SPEC §14): a researcher designs a study (a task, conditions, consent,
//! a clock, completion codes), opens it, and shares its entry link; each participant who
//! consents is assigned to a condition and works in a thread of their own, seeded from the
//! task and reduced to the condition's panels and tools. Everything a session does is the
//! thread's ordinary record (revisions, messages, steps), so the data and the replay come from
//! what haico keeps anyway.
//!
//! This module holds the rules; `http/studies.rs` and `http/participant.rs` only translate.
//! - `design.rs`: what a design may say, every refusal naming its path;
//! - `lifecycle.rs`: create, change, open, close, delete a study;
//! - `members.rs`: who may do what with a study (owner, editors, viewers), its members;
//! - `participants.rs`: entering, consent and balanced assignment, Start, Finish, withdraw;
//! - `access.rs`: what a participant's token reaches (its own thread, within its condition);
//! - `clock.rs`: the deadline, enforced by the server with no browser open;
//! - `policy.rs`: the condition as the agent's per-thread policy;
//! - `measures.rs`, `export.rs`: per-session measures, the summary, the exports;
//! - `pseudonym.rs`: the keyed hash that replaces participant ids in exports.

pub mod access;
pub mod clock;
pub mod design;
pub mod export;
mod lifecycle;
pub mod measures;
mod members;
mod participants;
mod policy;
pub mod pseudonym;
mod roles;
mod service;

pub use crate::people::Participant;
pub use design::{Design, DesignError};
pub use lifecycle::{StudyChange, StudyView};
pub use participants::{Entered, ParticipantView};
pub use policy::ConditionPolicies;
pub use roles::{StudyOp, StudyRole};
pub use service::{
    PARTICIPANT_COOKIE, PARTICIPANT_TOKEN_PREFIX, RECORDED, Studies, StudyError, write_refusal,
};
