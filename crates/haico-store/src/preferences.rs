//! Preferences: the user's hard and soft constraints, ordered by when they were recorded.
//!
//! The agent path passes `respect_lock = true`, which puts `locked = FALSE` into the SQL write
//! itself: a user who locks a preference while an agent call is in flight wins, because the
//! database re-checks the condition on the row it is about to change.

use serde::Serialize;

use super::repository::repository;
use crate::panels::{Panel, PreferenceKind};
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::ListOp, models::Preference, query::OnThread,
    query::params, query::row_shape, repository::now,
};

/// A preference to record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewPreference {
    /// The constraint in a few words.
    pub title: String,
    /// Optional detail.
    pub subtitle: Option<String>,
    /// Hard or soft.
    pub kind: PreferenceKind,
}

/// A partial edit; `None` leaves a field as it is. `subtitle: Some(None)` clears the subtitle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreferencePatch {
    /// New title.
    pub title: Option<String>,
    /// New subtitle, or `Some(None)` to clear it.
    pub subtitle: Option<Option<String>>,
    /// New kind.
    pub kind: Option<PreferenceKind>,
    /// Lock or unlock; only the user path sets this.
    pub locked: Option<bool>,
}

/// What a lock-respecting write did to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The row was changed or removed.
    Applied,
    /// The row is locked; nothing was written.
    Locked,
    /// There is no such row (any more).
    Missing,
}

/// A row of [`COLUMNS`].
struct PreferenceRow {
    id: i64,
    title: String,
    subtitle: Option<String>,
    kind: String,
    locked: bool,
}

row_shape!(PreferenceRow as COLUMNS { id: i64, title: String, subtitle: Option<String>, kind: String,
    locked: bool } => PreferenceRow { id, title, subtitle, kind, locked });

impl From<PreferenceRow> for Preference {
    fn from(row: PreferenceRow) -> Self {
        Preference {
            id: row.id,
            title: row.title,
            subtitle: row.subtitle,
            kind: PreferenceKind::from_stored(&row.kind),
            locked: row.locked,
        }
    }
}

repository!(
    /// The preferences panel.
    PreferencesRepo,
    preferences
);

impl PreferencesRepo<'_> {
    /// The preferences, in the order they were recorded (the order 1-based indices refer to).
    pub async fn list_preferences(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Vec<Preference>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM preferences WHERE thread_id = $1 ORDER BY id");
        let rows: Vec<PreferenceRow> = self
            .fetch_all(&sql, &params![thread_id])
            .await
            .context("listing preferences")?;
        Ok(rows.into_iter().map(Preference::from).collect())
    }

    /// The thread's turn index and its preferences, read in one statement (one round trip),
    /// or `None` when the thread does not exist: what a read-only tool needs.
    pub async fn preferences_on_thread(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<(i64, Vec<Preference>)>, StoreError> {
        let sql = format!(
            "SELECT t.turn_index AS thread_turn, p.id IS NOT NULL AS found, p.* \
             FROM threads t LEFT JOIN (SELECT {COLUMNS} FROM preferences WHERE thread_id = $1) p \
             ON TRUE WHERE t.id = $1 ORDER BY p.id"
        );
        let rows: Vec<OnThread<PreferenceRow>> = self
            .fetch_all(&sql, &params![thread_id.as_str()])
            .await
            .context("listing preferences")?;
        Ok(OnThread::gather(rows)
            .map(|(turn, rows)| (turn, rows.into_iter().map(Preference::from).collect())))
    }

    /// One preference by id.
    pub async fn get_preference(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<Preference>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM preferences WHERE thread_id = $1 AND id = $2");
        let row: Option<PreferenceRow> = self
            .fetch_optional(&sql, &params![thread_id, id])
            .await
            .context("reading a preference")?;
        Ok(row.map(Preference::from))
    }

    /// Records preferences, unlocked, in order; returns them with their ids.
    pub async fn add_preferences(
        &mut self,
        thread_id: &ThreadId,
        items: &[NewPreference],
    ) -> Result<Vec<Preference>, StoreError> {
        let at = now();
        let mut added = Vec::with_capacity(items.len());
        for item in items {
            let sql = format!(
                "INSERT INTO preferences (thread_id, title, subtitle, kind, locked, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, FALSE, $5, $5) RETURNING {COLUMNS}"
            );
            let row: PreferenceRow = self
                .fetch_one(
                    &sql,
                    &params![
                        thread_id,
                        &item.title,
                        item.subtitle.as_deref(),
                        item.kind.as_str(),
                        at
                    ],
                )
                .await
                .context("recording a preference")?;
            added.push(Preference::from(row));
        }
        if !added.is_empty() {
            self.mark(Panel::Preferences);
            self.journal_mut().preferences.push(ListOp::Add {
                items: added.clone(),
            });
        }
        Ok(added)
    }

    /// Edits one preference. With `respect_lock` a locked row is left alone and reported as
    /// [`WriteOutcome::Locked`]; the lock check is part of the `UPDATE` itself.
    pub async fn update_preference(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
        patch: &PreferencePatch,
        respect_lock: bool,
    ) -> Result<(WriteOutcome, Option<Preference>), StoreError> {
        let at = now();
        let lock_condition = if respect_lock {
            " AND locked = FALSE"
        } else {
            ""
        };
        let sql = format!(
            "UPDATE preferences SET title = COALESCE($3, title), \
             subtitle = CASE WHEN $4 THEN $5 ELSE subtitle END, \
             kind = COALESCE($6, kind), locked = COALESCE($7, locked), updated_at = $8 \
             WHERE thread_id = $1 AND id = $2{lock_condition} RETURNING {COLUMNS}"
        );
        let set_subtitle = patch.subtitle.is_some();
        let subtitle = patch.subtitle.clone().flatten();
        let row: Option<PreferenceRow> = self
            .fetch_optional(
                &sql,
                &params![
                    thread_id,
                    id,
                    patch.title.as_deref(),
                    set_subtitle,
                    subtitle.as_deref(),
                    patch.kind.map(PreferenceKind::as_str),
                    patch.locked,
                    at
                ],
            )
            .await
            .context("updating a preference")?;
        match row {
            Some(row) => {
                let preference = Preference::from(row);
                self.mark(Panel::Preferences);
                self.journal_mut().preferences.push(ListOp::Update {
                    item: preference.clone(),
                });
                Ok((WriteOutcome::Applied, Some(preference)))
            }
            None => Ok((self.why_untouched(thread_id, id).await?, None)),
        }
    }

    /// Deletes one preference, with the same lock rule as [`Self::update_preference`].
    pub async fn delete_preference(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
        respect_lock: bool,
    ) -> Result<WriteOutcome, StoreError> {
        let lock_condition = if respect_lock {
            " AND locked = FALSE"
        } else {
            ""
        };
        let sql =
            format!("DELETE FROM preferences WHERE thread_id = $1 AND id = $2{lock_condition}");
        let result = self
            .execute(&sql, &params![thread_id, id])
            .await
            .context("removing a preference")?;
        if result > 0 {
            self.mark(Panel::Preferences);
            self.journal_mut()
                .preferences
                .push(ListOp::Remove { ids: vec![id] });
            Ok(WriteOutcome::Applied)
        } else {
            self.why_untouched(thread_id, id).await
        }
    }

    /// After a write matched no row: was the row locked, or gone?
    async fn why_untouched(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<WriteOutcome, StoreError> {
        let row: Option<(bool,)> = self
            .fetch_optional(
                "SELECT locked FROM preferences WHERE thread_id = $1 AND id = $2",
                &params![thread_id, id],
            )
            .await
            .context("checking a preference's lock")?;
        Ok(match row {
            Some((true,)) => WriteOutcome::Locked,
            _ => WriteOutcome::Missing,
        })
    }
}

impl PreferencesRepo<'_> {
    /// Makes the preferences exactly `items`, keeping their ids and locks: a restore.
    pub async fn replace_preferences(
        &mut self,
        thread_id: &ThreadId,
        items: &[Preference],
    ) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM preferences WHERE thread_id = $1",
            &params![thread_id],
        )
        .await
        .context("clearing the preferences")?;
        let at = now();
        for item in items {
            self.execute("INSERT INTO preferences (id, thread_id, title, subtitle, kind, locked, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)", &params![item.id, thread_id, &item.title, item.subtitle.as_deref(), item.kind.as_str(), item.locked, at]).await
            .context("restoring a preference")?;
        }
        self.mark(Panel::Preferences);
        self.journal_mut().preferences.push(ListOp::Set {
            items: items.to_vec(),
        });
        Ok(())
    }
}
