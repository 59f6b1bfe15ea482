//! The parts of the load generator that the limit benchmark (`haico-limit`)
//! shares with it: the op mix and its weights, and process CPU time. Sharing them is what
//! makes the two numbers comparable: the limit runs the same ops in the same proportions.

pub mod cpu;
pub mod workload;
