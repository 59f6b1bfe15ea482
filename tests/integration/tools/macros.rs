//! Compile-time tests of `#[workspace_tools]` / `#[workspace_tool]`: every misuse fails with the
//! message snapshotted next to its case in `tests/ui/`, and well-formed collections compile.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test --test integration -- tools::macros`.

#[test]
fn workspace_tool_macros() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail_*.rs");
    cases.pass("tests/ui/pass_*.rs");
}
