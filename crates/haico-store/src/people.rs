//! People: accounts, sign-in sessions, who owns a thread and whom it is shared with. Secrets
//! are never stored: a password as its slow salted hash (made above this layer), a token and a
//! session as their SHA-256 digest, looked up by that digest.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{error::Context, error::StoreError, query::params, query::row_shape, repository::now};

/// An account.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct User {
    /// Its id.
    pub id: i64,
    /// The name people sign in and share with (unique).
    pub name: String,
    /// `admin` or `member`.
    pub role: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// A thread's member.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Member {
    /// The person's name.
    pub name: String,
    /// `owner`, `editor` or `viewer`.
    pub role: String,
}

row_shape!(User as USER_COLUMNS { id: i64, name: String, role: String, created_at: DateTime<Utc> } => User {
    id,
    name,
    role,
    created_at,
});

row_shape!(Member { name: String, role: String } => Member { name, role });

repository!(
    /// Accounts, sessions, owners and members.
    PeopleRepo,
    people
);

impl PeopleRepo<'_> {
    /// Whether any account exists.
    pub async fn any_user(&mut self) -> Result<bool, StoreError> {
        let (exists,): (bool,) = self
            .fetch_one("SELECT EXISTS (SELECT 1 FROM users)", &params![])
            .await
            .context("checking for accounts")?;
        Ok(exists)
    }

    /// Creates an account; a name in use is [`StoreError::AlreadyExists`].
    pub async fn create_user(
        &mut self,
        name: &str,
        role: &str,
        password_hash: Option<&str>,
        token_digest: &str,
    ) -> Result<User, StoreError> {
        let at = now();
        let sql = format!(
            "INSERT INTO users (name, role, password_hash, token_digest, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING RETURNING {USER_COLUMNS}"
        );
        let row: Option<User> = self
            .fetch_optional(&sql, &params![name, role, password_hash, token_digest, at])
            .await
            .context("creating an account")?;
        row.ok_or_else(|| StoreError::AlreadyExists(format!("account {name:?}")))
    }

    /// Every account, by name.
    pub async fn users(&mut self) -> Result<Vec<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY name");
        self.fetch_all(&sql, &[]).await.context("listing accounts")
    }

    /// The account with this name.
    pub async fn user_named(&mut self, name: &str) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE name = $1");
        self.fetch_optional(&sql, &params![name])
            .await
            .context("reading an account")
    }

    /// The account a personal token's digest belongs to.
    pub async fn user_by_token(&mut self, digest: &str) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE token_digest = $1");
        self.fetch_optional(&sql, &params![digest])
            .await
            .context("checking a token")
    }

    /// The account and its password hash, for a sign-in.
    pub async fn user_for_sign_in(
        &mut self,
        name: &str,
    ) -> Result<Option<(User, Option<String>)>, StoreError> {
        struct Row {
            user: User,
            password_hash: Option<String>,
        }
        row_shape!(Row {
            id: i64,
            name: String,
            role: String,
            created_at: DateTime<Utc>,
            password_hash: Option<String>,
        } => Row { user: User { id, name, role, created_at }, password_hash });
        let sql = format!("SELECT {USER_COLUMNS}, password_hash FROM users WHERE name = $1");
        let row: Option<Row> = self
            .fetch_optional(&sql, &params![name])
            .await
            .context("reading an account")?;
        Ok(row.map(|row| (row.user, row.password_hash)))
    }

    /// Removes an account (its sessions go with it; threads it owned lose their owner).
    pub async fn remove_user(&mut self, name: &str) -> Result<bool, StoreError> {
        let removed = self
            .execute("DELETE FROM users WHERE name = $1", &params![name])
            .await
            .context("removing an account")?;
        Ok(removed > 0)
    }

    /// Gives an account a new token digest (the old token stops working).
    pub async fn set_token(
        &mut self,
        name: &str,
        digest: &str,
    ) -> Result<Option<User>, StoreError> {
        let sql =
            format!("UPDATE users SET token_digest = $2 WHERE name = $1 RETURNING {USER_COLUMNS}");
        self.fetch_optional(&sql, &params![name, digest])
            .await
            .context("replacing a token")
    }

    /// Gives every thread without an owner to `user` (the first administrator).
    pub async fn adopt_ownerless_threads(&mut self, user: i64) -> Result<u64, StoreError> {
        self.execute(
            "UPDATE threads SET owner_id = $1 WHERE owner_id IS NULL",
            &params![user],
        )
        .await
        .context("giving ownerless threads an owner")
    }

    /// Opens a session for `user` until `expires_at`; `digest` is the session secret's.
    pub async fn create_session(
        &mut self,
        digest: &str,
        user: i64,
        expires_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let at = now();
        self.execute(
            "INSERT INTO sessions (digest, user_id, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4)",
            &params![digest, user, at, expires_at],
        )
        .await
        .context("opening a session")?;
        Ok(())
    }

    /// Forgets sessions that can no longer be used (expired or signed out), so the table holds
    /// only live ones.
    pub async fn prune_sessions(&mut self) -> Result<u64, StoreError> {
        let at = now();
        self.execute(
            "DELETE FROM sessions WHERE expires_at <= $1 OR revoked_at IS NOT NULL",
            &params![at],
        )
        .await
        .context("forgetting ended sessions")
    }

    /// The account of a session that is neither expired nor revoked.
    pub async fn session_user(&mut self, digest: &str) -> Result<Option<User>, StoreError> {
        let at = now();
        let sql = "SELECT u.id, u.name, u.role, u.created_at FROM sessions s \
                   JOIN users u ON u.id = s.user_id \
                   WHERE s.digest = $1 AND s.revoked_at IS NULL AND s.expires_at > $2";
        self.fetch_optional(sql, &params![digest, at])
            .await
            .context("checking a session")
    }

    /// Ends a session.
    pub async fn revoke_session(&mut self, digest: &str) -> Result<(), StoreError> {
        let at = now();
        self.execute(
            "UPDATE sessions SET revoked_at = $2 WHERE digest = $1 AND revoked_at IS NULL",
            &params![digest, at],
        )
        .await
        .context("ending a session")?;
        Ok(())
    }

    /// Sets a thread's owner.
    pub async fn set_owner(
        &mut self,
        thread_id: &ThreadId,
        user: Option<i64>,
    ) -> Result<(), StoreError> {
        self.execute(
            "UPDATE threads SET owner_id = $2 WHERE id = $1",
            &params![thread_id, user],
        )
        .await
        .context("setting a thread's owner")?;
        Ok(())
    }

    /// The thread's owner id (`Some(None)`: no owner) and `user`'s membership role in it
    /// (`viewer` for a member of the study whose participant's thread it is); `None` when the
    /// thread does not exist.
    pub async fn thread_access(
        &mut self,
        thread_id: &ThreadId,
        user: i64,
    ) -> Result<Option<(Option<i64>, Option<String>)>, StoreError> {
        // A member of a study (any role) reads its participants' threads as its owner does;
        // that they never change them is the HTTP layer's rule for every researcher.
        let row: Option<(Option<i64>, Option<String>)> = self
            .fetch_optional(
                "SELECT t.owner_id, COALESCE(m.role, (SELECT 'viewer' FROM study_sessions ss \
                 JOIN study_members sm ON sm.study_id = ss.study_id \
                 WHERE ss.thread_id = t.id AND sm.user_id = $2 LIMIT 1)) FROM threads t \
                 LEFT JOIN thread_members m ON m.thread_id = t.id AND m.user_id = $2 \
                 WHERE t.id = $1",
                &params![thread_id, user],
            )
            .await
            .context("checking access to a thread")?;
        Ok(row)
    }

    /// The threads `user` owns or is a member of, with their role in each (`owner`,
    /// `editor`, `viewer`).
    pub async fn visible_threads(
        &mut self,
        user: i64,
    ) -> Result<Vec<(String, String)>, StoreError> {
        self.fetch_all(
            "SELECT id, 'owner' FROM threads WHERE owner_id = $1 \
                 UNION ALL SELECT m.thread_id, m.role FROM thread_members m \
                 JOIN threads t ON t.id = m.thread_id \
                 WHERE m.user_id = $1 AND (t.owner_id IS NULL OR t.owner_id <> $1)",
            &params![user],
        )
        .await
        .context("listing visible threads")
    }

    /// Shares a thread with `user` as `role` (or changes the role).
    pub async fn set_member(
        &mut self,
        thread_id: &ThreadId,
        user: i64,
        role: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO thread_members (thread_id, user_id, role) VALUES ($1, $2, $3) \
                 ON CONFLICT (thread_id, user_id) DO UPDATE SET role = excluded.role",
            &params![thread_id, user, role],
        )
        .await
        .context("sharing a thread")?;
        Ok(())
    }

    /// Stops sharing a thread with `user`; whether they were a member.
    pub async fn remove_member(
        &mut self,
        thread_id: &ThreadId,
        user: i64,
    ) -> Result<bool, StoreError> {
        let removed = self
            .execute(
                "DELETE FROM thread_members WHERE thread_id = $1 AND user_id = $2",
                &params![thread_id, user],
            )
            .await
            .context("unsharing a thread")?;
        Ok(removed > 0)
    }

    /// The thread's owner (first, when it has one) and members, by name.
    pub async fn members(&mut self, thread_id: &ThreadId) -> Result<Vec<Member>, StoreError> {
        self.fetch_all(
            "SELECT name, role FROM ( \
                     SELECT u.name AS name, 'owner' AS role FROM threads t \
                     JOIN users u ON u.id = t.owner_id WHERE t.id = $1 \
                     UNION ALL \
                     SELECT u.name AS name, m.role AS role FROM thread_members m \
                     JOIN users u ON u.id = m.user_id WHERE m.thread_id = $1) AS x \
                 ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, name",
            &params![thread_id],
        )
        .await
        .context("listing a thread's members")
    }
}
