//! Build-time input of the binary: the commit it was built from, for `haico --version` (a
//! report of a problem is only useful when it says which build showed it). It comes from
//! `HAICO_BUILD_COMMIT` when a packager sets it (a build from a source archive has no
//! repository to ask), else from `git`, else it is `unknown`; it is looked up again when the
//! checked-out commit moves, not on every build.

use std::{env, path::PathBuf, process::Command};

fn main() {
    stamp_commit();
}

/// Sets `HAICO_COMMIT` for the crate.
fn stamp_commit() {
    println!("cargo:rerun-if-env-changed=HAICO_BUILD_COMMIT");
    let commit = env::var("HAICO_BUILD_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=HAICO_COMMIT={}", commit.trim());
}

/// The checked-out commit, watching the files that change when it does.
fn git_commit() -> Option<String> {
    let git_dir = PathBuf::from(git(&["rev-parse", "--git-dir"])?);
    let common_dir = PathBuf::from(git(&["rev-parse", "--git-common-dir"])?);
    println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
    println!(
        "cargo:rerun-if-changed={}",
        common_dir.join("packed-refs").display()
    );
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        println!(
            "cargo:rerun-if-changed={}",
            common_dir.join(branch).display()
        );
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}

/// One git command's trimmed output, `None` when git is missing or says no.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.trim().to_owned()).filter(|text| !text.is_empty())
}
