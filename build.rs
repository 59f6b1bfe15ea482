//! Build-time inputs of the binary:
//! - the commit it was built from, for `haico --version`: a report of a problem is only useful
//!   when it says which build showed it. It comes from `HAICO_BUILD_COMMIT` when a packager
//!   sets it (a build from a source archive has no repository to ask), else from `git`, else
//!   it is `unknown`; it is looked up again when the checked-out commit moves, not on every
//!   build;
//! - the SQLite migrations (`migrations/sqlite/NNNN_words.sql`), embedded as a list that
//!   `src/store/sqlite/migrate.rs` runs: every file of the folder, in number order, so a
//!   migration added there is picked up by the next build with nothing else to edit.

use std::{env, fmt::Write as _, fs, path::Path, path::PathBuf, process::Command};

fn main() {
    stamp_commit();
    embed_sqlite_migrations();
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

/// Writes `$OUT_DIR/sqlite_migrations.rs`: the list of `(number, description, SQL)` that
/// `src/store/sqlite/migrate.rs` includes.
fn embed_sqlite_migrations() {
    let folder = Path::new("migrations/sqlite");
    println!("cargo:rerun-if-changed={}", folder.display());
    let mut found = Vec::new();
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(err) => fail(&format!("cannot read {}: {err}", folder.display())),
    };
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(err) => fail(&format!("cannot list {}: {err}", folder.display())),
        };
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".sql") else {
            continue;
        };
        let Some((number, words)) = stem.split_once('_') else {
            fail(&format!("{name}: a migration is named NNNN_words.sql"));
        };
        let Ok(version) = number.parse::<i64>() else {
            fail(&format!(
                "{name}: a migration's name starts with its number"
            ));
        };
        println!("cargo:rerun-if-changed={}", path.display());
        found.push((version, words.replace('_', " "), name.to_string()));
    }
    found.sort();
    if let Some(pair) = found.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        fail(&format!("two migrations share the number {}", pair[0].0));
    }
    let root = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let mut list = String::from("&[\n");
    for (version, description, name) in &found {
        let _ = writeln!(
            list,
            "    ({version}, {description:?}, include_str!({:?})),",
            format!("{root}/migrations/sqlite/{name}")
        );
    }
    list.push_str("]\n");
    let out = env::var("OUT_DIR").unwrap_or_else(|_| fail("OUT_DIR is not set"));
    if let Err(err) = fs::write(Path::new(&out).join("sqlite_migrations.rs"), list) {
        fail(&format!("cannot write the migration list: {err}"));
    }
}

fn fail(why: &str) -> ! {
    eprintln!("build.rs: {why}");
    std::process::exit(1);
}
