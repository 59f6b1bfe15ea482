//! The agent: whole turns against mock providers, faults, the prompt's cache-friendly layout,
//! log spans, and `haico eval`.

mod eval;
mod faults;
mod prompt_cache;
mod small_models;
mod spans;
mod turns;
