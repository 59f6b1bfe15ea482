//! Build-time input of the store: the SQLite migrations (`migrations/sqlite/NNNN_words.sql`),
//! embedded as a list that `src/sqlite/migrate.rs` runs: every file of the folder, in number
//! order, so a migration added there is picked up by the next build with nothing else to edit.

use std::{env, fmt::Write as _, fs, path::Path};

fn main() {
    embed_sqlite_migrations();
}

/// Writes `$OUT_DIR/sqlite_migrations.rs`: the list of `(number, description, SQL)` that
/// `src/sqlite/migrate.rs` includes.
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
