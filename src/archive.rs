//! `haico export` and `haico import`: recordings of threads to and from files, through the same
//! workspace operations as `GET …/export` and `POST /api/threads/import`.

use std::{io::Read, path::Path};

use anyhow::{Context, bail};

use crate::{config::ExportArgs, config::ImportArgs};

use haico_store::{Database, ThreadId};

use haico_core::{workspace::Workspaces, workspace::recording::to_jsonl};

/// Writes the recordings `args` asks for.
pub async fn export(db: Database, args: &ExportArgs) -> anyhow::Result<()> {
    let workspaces = Workspaces::standalone(db);
    if args.all {
        let Some(dir) = &args.out else {
            bail!("--all needs --out DIR: the folder to write one file per thread into");
        };
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))?;
        let threads = workspaces
            .threads()
            .list()
            .await
            .context("listing the threads")?;
        for thread in &threads {
            let id = ThreadId::parse(&thread.id)?;
            let file = dir.join(format!("{id}.haico.jsonl"));
            write_one(&workspaces, &id, Some(&file)).await?;
        }
        eprintln!("wrote {} recordings to {}", threads.len(), dir.display());
        return Ok(());
    }
    let Some(thread) = &args.thread else {
        bail!("name the thread to export with --thread ID, or export all with --all --out DIR");
    };
    let id = ThreadId::parse(thread).context("--thread")?;
    write_one(&workspaces, &id, args.out.as_deref()).await
}

async fn write_one(
    workspaces: &Workspaces,
    id: &ThreadId,
    to: Option<&Path>,
) -> anyhow::Result<()> {
    let lines = workspaces
        .export(id)
        .await
        .with_context(|| format!("exporting thread `{id}`"))?;
    let text = to_jsonl(&lines)?;
    match to {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(text.as_bytes())
                .context("writing the recording to standard output")?;
        }
    }
    Ok(())
}

/// Loads a recording as a new thread and prints its id.
pub async fn import(db: Database, args: &ImportArgs) -> anyhow::Result<()> {
    let mut text = String::new();
    if args.file.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the recording from standard input")?;
    } else {
        text = std::fs::read_to_string(&args.file)
            .with_context(|| format!("reading {}", args.file.display()))?;
    }
    let id = args
        .id
        .as_deref()
        .map(ThreadId::parse)
        .transpose()
        .context("--id")?;
    let thread = Workspaces::standalone(db)
        .import(&text, id)
        .await
        .with_context(|| format!("importing {}", args.file.display()))?;
    println!("{}", thread.id);
    Ok(())
}
