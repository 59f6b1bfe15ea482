//! Well-formed tool collections compile and expose their tools. The macros' error messages for
//! misuses are unit-tested in `crates/haico-macros` (`src/tests.rs`).

mod collection;
mod paths;
mod read_only;
