//! Suggestions (issue 25): the document mode, the agent's suggestions, accept and reject over
//! REST, their events, history and recordings, and who may decide — on both engines.

mod agent;
mod people_mcp;
mod rest;
