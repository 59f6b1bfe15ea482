//! The working document: one row per thread, written by upsert.
//!
//! Each row keeps its body's length in characters (`chars`), computed in Rust as the body is
//! written: counting a 1 MB body in SQL takes about a millisecond, and both the append's
//! answer and every prompt's excerpt need it.

use super::repository::repository;
use crate::panels::Panel;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::TextOp, journal::splice, models::Document,
    query::params, repository::Backend, repository::now,
};

/// The document's size after a write, in Unicode code points, and its new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentWrite {
    /// Characters (code points) in the body after the write.
    pub chars: i64,
    /// The version after the write.
    pub version: i64,
}

repository!(
    /// The document panel.
    DocumentsRepo,
    documents
);

impl DocumentsRepo<'_> {
    /// The document, if one exists.
    pub async fn get_document(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<Document>, StoreError> {
        self.fetch_optional(
            "SELECT title, content, version FROM documents WHERE thread_id = $1",
            &params![thread_id],
        )
        .await
        .context("reading the document")
    }

    /// The document's version, without reading its body.
    pub async fn document_version(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<i64>, StoreError> {
        let row: Option<(i64,)> = self
            .fetch_optional(
                "SELECT version FROM documents WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the document version")?;
        Ok(row.map(|(v,)| v))
    }

    /// The document, its row held against other writers until this transaction ends (on
    /// SQLite the transaction holds the write lock already): the read of a read-modify-write
    /// such as an in-place edit, so that no write lands between what it read and what it
    /// writes back.
    pub async fn document_for_edit(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<Document>, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => "SELECT title, content, version FROM documents WHERE thread_id = $1",
            Backend::Postgres => {
                "SELECT title, content, version FROM documents WHERE thread_id = $1 FOR UPDATE"
            }
        };
        self.fetch_optional(sql, &params![thread_id])
            .await
            .context("reading the document")
    }

    /// Appends to the body, creating the document when there is none.
    pub async fn append_document(
        &mut self,
        thread_id: &ThreadId,
        text: &str,
    ) -> Result<DocumentWrite, StoreError> {
        let at = now();
        let (chars, version, title): (i64, i64, String) = self
            .fetch_one(
                "INSERT INTO documents (thread_id, title, content, version, updated_at, chars) \
                 VALUES ($1, '', $2, 1, $3, $4) \
                 ON CONFLICT (thread_id) DO UPDATE SET content = documents.content || excluded.content, \
                 chars = documents.chars + excluded.chars, \
                 version = documents.version + 1, updated_at = excluded.updated_at \
                 RETURNING chars, version, title",
                &params![thread_id, text, at, char_len(text)],
            )
            .await
            .context("appending to the document")?;
        self.mark(Panel::Document);
        self.journal_mut().document_ops(
            vec![TextOp::Append {
                text: text.to_string(),
            }],
            title,
            version,
        );
        Ok(DocumentWrite { chars, version })
    }
}

impl DocumentsRepo<'_> {
    /// The user path's write: replaces the body (and the title when one is given) and returns
    /// the document as stored. With `expected_version` the write happens only when the stored
    /// version (0 when there is no document) equals it; the condition is part of the SQL
    /// statement itself, so it holds under concurrent writers. `None` means the version was
    /// stale and nothing was written.
    pub async fn put_document(
        &mut self,
        thread_id: &ThreadId,
        content: &str,
        title: Option<&str>,
        expected_version: Option<i64>,
    ) -> Result<Option<Document>, StoreError> {
        let at = now();
        let old = if expected_version.is_none() && self.backend() == Backend::Postgres {
            match self.replace_existing(thread_id, content, title, at).await? {
                Some(document) => return Ok(Some(document)),
                // No document when the row was looked for: the upsert creates it, recorded as
                // a whole state, which is right whatever a person's edit did in between.
                None => None,
            }
        } else {
            // The body as it is, held until the transaction ends, so the change recorded for
            // the history is taken against exactly what this write replaces.
            self.document_for_update(thread_id).await?
        };
        let row: Option<(String, i64)> = match expected_version {
            // Unconditional: the same upsert as the tools.
            None => {
                self.fetch_optional(
                    "INSERT INTO documents (thread_id, title, content, version, updated_at, chars) \
                     VALUES ($1, COALESCE($2, ''), $3, 1, $4, $5) \
                     ON CONFLICT (thread_id) DO UPDATE SET content = excluded.content, \
                     chars = excluded.chars, \
                     title = COALESCE($2, documents.title), version = documents.version + 1, \
                     updated_at = excluded.updated_at \
                     RETURNING title, version",
                    &params![thread_id, title, content, at, char_len(content)],
                )
                .await
            }
            // "There is no document yet": insert, or update only a row still at version 0.
            Some(0) => {
                self.fetch_optional(
                    "INSERT INTO documents (thread_id, title, content, version, updated_at, chars) \
                     VALUES ($1, COALESCE($2, ''), $3, 1, $4, $5) \
                     ON CONFLICT (thread_id) DO UPDATE SET content = excluded.content, \
                     chars = excluded.chars, \
                     title = COALESCE($2, documents.title), version = documents.version + 1, \
                     updated_at = excluded.updated_at \
                     WHERE documents.version = 0 \
                     RETURNING title, version",
                    &params![thread_id, title, content, at, char_len(content)],
                )
                .await
            }
            // An existing document at exactly this version.
            Some(expected) => {
                self.fetch_optional(
                    "UPDATE documents SET content = $3, title = COALESCE($2, title), \
                     version = version + 1, updated_at = $4, chars = $6 \
                     WHERE thread_id = $1 AND version = $5 \
                     RETURNING title, version",
                    &params![thread_id, title, content, at, expected, char_len(content)],
                )
                .await
            }
        }
        .context("writing the document")?;
        let Some((title, version)) = row else {
            return Ok(None);
        };
        Ok(Some(self.replaced(content, title, version, old.as_deref())))
    }

    /// Marks and journals a body written whole: against the body it replaced, as the edit
    /// that made one from the other, or, with none, as the whole document.
    fn replaced(
        &mut self,
        content: &str,
        title: String,
        version: i64,
        before: Option<&str>,
    ) -> Document {
        self.mark(Panel::Document);
        let document = Document {
            title,
            content: content.to_string(),
            version,
        };
        match before {
            Some(before) => self.journal_mut().document_ops(
                vec![splice(before, content)],
                document.title.clone(),
                version,
            ),
            None => self.journal_mut().document_set(Some(document.clone())),
        }
        document
    }

    /// On PostgreSQL, replaces an existing document's body in one statement that also answers
    /// the body it replaced: the subquery locks the row first, so what it reads is exactly what
    /// the update overwrites, even when a person's edit commits in between (the update then
    /// waits, and both see that edit). An agent's call sends it with the thread's lock: one
    /// round trip where reading and writing were two. `None`, having written nothing, when
    /// there is no document yet (the caller's upsert creates it). SQLite reads, then writes:
    /// its statements run inline at no cost.
    async fn replace_existing(
        &mut self,
        thread_id: &ThreadId,
        content: &str,
        title: Option<&str>,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<Option<Document>, StoreError> {
        let row: Option<(String, String, i64)> = self
            .fetch_optional(
                "UPDATE documents d SET content = $3, chars = $5, title = COALESCE($2, d.title), \
                 version = d.version + 1, updated_at = $4 \
                 FROM (SELECT content FROM documents WHERE thread_id = $1 FOR UPDATE) AS old \
                 WHERE d.thread_id = $1 \
                 RETURNING old.content, d.title, d.version",
                &params![thread_id, title, content, at, char_len(content)],
            )
            .await
            .context("writing the document")?;
        Ok(row
            .map(|(before, title, version)| self.replaced(content, title, version, Some(&before))))
    }

    /// The body, locked against other writers until this transaction ends (on SQLite the
    /// transaction holds the write lock already).
    async fn document_for_update(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<String>, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => "SELECT content FROM documents WHERE thread_id = $1",
            Backend::Postgres => "SELECT content FROM documents WHERE thread_id = $1 FOR UPDATE",
        };
        let row: Option<(String,)> = self
            .fetch_optional(sql, &params![thread_id])
            .await
            .context("reading the document")?;
        Ok(row.map(|(content,)| content))
    }

    /// Sets the document whole, or removes it (`None`): a restore. A set document gets the next
    /// version, so editors holding an older one notice.
    pub async fn set_document(
        &mut self,
        thread_id: &ThreadId,
        document: Option<(&str, &str)>,
    ) -> Result<Option<Document>, StoreError> {
        let Some((title, content)) = document else {
            let removed = self
                .execute(
                    "DELETE FROM documents WHERE thread_id = $1",
                    &params![thread_id],
                )
                .await
                .context("removing the document")?;
            if removed > 0 {
                self.mark(Panel::Document);
                self.journal_mut().document_set(None);
            }
            return Ok(None);
        };
        let at = now();
        let (version,): (i64,) = self
            .fetch_one(
                "INSERT INTO documents (thread_id, title, content, version, updated_at, chars) \
                 VALUES ($1, $2, $3, 1, $4, $5) \
                 ON CONFLICT (thread_id) DO UPDATE SET content = excluded.content, \
                 chars = excluded.chars, \
                 title = excluded.title, version = documents.version + 1, \
                 updated_at = excluded.updated_at RETURNING version",
                &params![thread_id, title, content, at, char_len(content)],
            )
            .await
            .context("restoring the document")?;
        self.mark(Panel::Document);
        let document = Document {
            title: title.to_string(),
            content: content.to_string(),
            version,
        };
        self.journal_mut().document_set(Some(document.clone()));
        Ok(Some(document))
    }

    /// Writes the document exactly as given, version included (an import's present state).
    pub async fn write_document_exact(
        &mut self,
        thread_id: &ThreadId,
        document: &Document,
    ) -> Result<(), StoreError> {
        let at = now();
        self.execute(
            "INSERT INTO documents (thread_id, title, content, version, updated_at, chars) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (thread_id) DO UPDATE SET title = excluded.title, \
                 content = excluded.content, version = excluded.version, \
                 chars = excluded.chars, updated_at = excluded.updated_at",
            &params![
                thread_id,
                &document.title,
                &document.content,
                document.version,
                at,
                char_len(&document.content)
            ],
        )
        .await
        .context("writing the document")?;
        self.mark(Panel::Document);
        Ok(())
    }
}

/// The length of `text` in characters (Unicode code points), as the `chars` column keeps it.
fn char_len(text: &str) -> i64 {
    i64::try_from(text.chars().count()).unwrap_or(i64::MAX)
}
