//! `haico user …`: accounts from the command line, through the same [`People`] rules as
//! `POST /api/users`. Whoever can open the database can do this, as with every other
//! subcommand.

use std::io::BufRead;

use anyhow::Context;

use crate::config::UserAction;

use haico_core::people::People;

use haico_store::Database;

/// Runs one `haico user` action and prints its outcome.
pub async fn run(db: Database, action: &UserAction) -> anyhow::Result<()> {
    let people = People::new(db.clone());
    match action {
        UserAction::Add {
            name,
            admin,
            password_stdin,
            ..
        } => {
            let password = if *password_stdin {
                let mut line = String::new();
                std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .context("reading the password from standard input")?;
                Some(line.trim_end_matches(['\r', '\n']).to_string())
            } else {
                None
            };
            let (user, token) = people
                .create_user(name, *admin, password.as_deref())
                .await
                .with_context(|| format!("adding the account `{name}`"))?;
            eprintln!(
                "made the {} `{}`; its personal token (shown once; send it as \
                 `Authorization: Bearer <token>`):",
                user.role, user.name
            );
            println!("{token}");
        }
        UserAction::List { .. } => {
            let users = people.users().await.context("listing the accounts")?;
            if users.is_empty() {
                eprintln!("no accounts: the server is in one-person mode");
            }
            for user in users {
                println!(
                    "{}\t{}\t{}",
                    user.name,
                    user.role,
                    user.created_at.to_rfc3339()
                );
            }
        }
        UserAction::Remove { name, .. } => {
            people
                .remove_user(name)
                .await
                .with_context(|| format!("removing the account `{name}`"))?;
            eprintln!("removed the account `{name}`");
        }
        UserAction::ResetToken { name, .. } => {
            let (user, token) = people
                .reset_token(name)
                .await
                .with_context(|| format!("giving `{name}` a new token"))?;
            eprintln!(
                "`{}` has a new personal token (shown once; the old one no longer works):",
                user.name
            );
            println!("{token}");
        }
    }
    // Servers on PostgreSQL remember who tokens are and who may do what: tell them at once.
    if !matches!(action, UserAction::List { .. })
        && let Some(pool) = db.postgres_pool()
    {
        crate::replicas::doorbell::announce_people_change(pool).await;
    }
    Ok(())
}
