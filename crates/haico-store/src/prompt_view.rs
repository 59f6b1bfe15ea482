//! The reads behind the agent's system prompt. The prompt shows only the start and end of a
//! long document and the first steps of a long plan, so these queries fetch just that, plus
//! the totals the prompt reports, instead of the whole workspace before every model call.

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, models::ArtifactSummary, models::PlanStep,
    plan::decode_steps, query::params, repository::Tx,
};

/// The document as the prompt shows it: all of it when it fits, else its head and tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentExcerpt {
    /// Title.
    pub title: String,
    /// The first characters (the whole body when it fits).
    pub head: String,
    /// The last characters; empty when the body fits whole.
    pub tail: String,
    /// Characters (code points) in the whole body.
    pub total_chars: i64,
}

/// The first steps of a plan and how many there are in all.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanPage {
    /// The first steps, in order.
    pub steps: Vec<PlanStep>,
    /// Steps in the whole plan.
    pub total: i64,
    /// Done steps in the whole plan.
    pub done: i64,
}

repository!(
    /// The cut-down reads the prompt needs.
    PromptViewRepo,
    prompt_view
);

impl PromptViewRepo<'_> {
    /// The document cut to `head + tail` characters: the body whole when it is no longer,
    /// else its first `head` and last `tail` characters. The stored length (`chars`) decides,
    /// so the body is never counted here; on SQLite the tail is cut by bytes (at most four
    /// per character) and trimmed to whole characters here, because a negative character
    /// offset makes SQLite count the whole body.
    pub async fn document_excerpt(
        &mut self,
        thread_id: &ThreadId,
        head: i64,
        tail: i64,
    ) -> Result<Option<DocumentExcerpt>, StoreError> {
        let keep = head + tail;
        let row: Option<(String, i64, String, String)> = match self.tx {
            Tx::Sqlite(_) => {
                let row: Option<(String, i64, String, Option<Vec<u8>>)> = self
                    .fetch_optional(
                        "SELECT title, chars, \
                         CASE WHEN chars <= $2 THEN content ELSE substr(content, 1, $3) END, \
                         CASE WHEN chars <= $2 THEN NULL ELSE substr(CAST(content AS BLOB), -$4) END \
                         FROM documents WHERE thread_id = $1",
                        &params![
                            thread_id,
                            keep,
                            head,
                            tail.saturating_mul(4).saturating_add(3)
                        ],
                    )
                    .await
                    .context("reading the document excerpt")?;
                row.map(|(title, chars, head, tail_bytes)| {
                    let tail_text = tail_bytes
                        .map(|bytes| last_chars(&bytes, tail))
                        .unwrap_or_default();
                    (title, chars, head, tail_text)
                })
            }
            Tx::Postgres(_) => {
                let row: Option<(String, i64, String, Option<String>)> = self
                    .fetch_optional(
                        "SELECT title, chars, \
                         CASE WHEN chars <= $2 THEN content ELSE substr(content, 1, $3::int) END, \
                         CASE WHEN chars <= $2 THEN NULL ELSE right(content, $4::int) END \
                         FROM documents WHERE thread_id = $1",
                        &params![thread_id, keep, head, tail],
                    )
                    .await
                    .context("reading the document excerpt")?;
                row.map(|(title, chars, head, tail)| (title, chars, head, tail.unwrap_or_default()))
            }
        };
        Ok(row.map(|(title, total_chars, head, tail)| DocumentExcerpt {
            title,
            head,
            tail,
            total_chars,
        }))
    }

    /// The first `limit` steps of the plan, with the plan's totals, in one statement that
    /// returns one row (the steps as a JSON array).
    pub async fn plan_page(
        &mut self,
        thread_id: &ThreadId,
        limit: i64,
    ) -> Result<PlanPage, StoreError> {
        let sql = match self.tx {
            Tx::Sqlite(_) => {
                "SELECT (SELECT json_group_array(json_array(id, text, depth, done) ORDER BY sort_key) \
                         FROM (SELECT id, text, depth, done, sort_key FROM todos \
                               WHERE thread_id = $1 ORDER BY sort_key LIMIT $2)), \
                        COUNT(*), COALESCE(SUM(CASE WHEN done THEN 1 ELSE 0 END), 0) \
                 FROM todos WHERE thread_id = $1"
            }
            Tx::Postgres(_) => {
                "SELECT (SELECT COALESCE(json_agg(json_build_array(id, text, depth, \
                                CASE WHEN done THEN 1 ELSE 0 END) ORDER BY sort_key)::text, '[]') \
                         FROM (SELECT id, text, depth, done, sort_key FROM todos \
                               WHERE thread_id = $1 ORDER BY sort_key LIMIT $2) AS page), \
                        COUNT(*), COALESCE(SUM(CASE WHEN done THEN 1 ELSE 0 END), 0)::bigint \
                 FROM todos WHERE thread_id = $1"
            }
        };
        let (steps, total, done): (String, i64, i64) = self
            .fetch_one(sql, &params![thread_id, limit])
            .await
            .context("reading the plan")?;
        Ok(PlanPage {
            steps: decode_steps(&steps)?,
            total,
            done,
        })
    }

    /// How many artifacts the thread has.
    pub async fn count_artifacts(&mut self, thread_id: &ThreadId) -> Result<i64, StoreError> {
        let (count,): (i64,) = self
            .fetch_one(
                "SELECT COUNT(*) FROM artifacts WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("counting artifacts")?;
        Ok(count)
    }

    /// The newest `limit` artifacts, for indexes that show only the latest.
    pub async fn recent_artifacts(
        &mut self,
        thread_id: &ThreadId,
        limit: i64,
    ) -> Result<Vec<ArtifactSummary>, StoreError> {
        self.artifacts()
            .list_artifacts(thread_id, None, limit)
            .await
    }
}

/// The last `chars` characters of the UTF-8 bytes `bytes`, which may start inside a character
/// (cut by byte count, three bytes more than four per character): the partial character
/// they may start with is skipped.
fn last_chars(bytes: &[u8], chars: i64) -> String {
    let start = bytes
        .iter()
        .position(|b| (b & 0xC0) != 0x80)
        .unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[start..]);
    let total = text.chars().count();
    let keep = usize::try_from(chars).unwrap_or(0);
    text.chars().skip(total.saturating_sub(keep)).collect()
}

#[cfg(test)]
mod tests {
    use super::last_chars;

    #[test]
    fn a_tail_cut_inside_a_character_starts_at_the_next_one() {
        let text = "aéü€z";
        let bytes = text.as_bytes();
        // Cut one byte into "é" (two bytes): the tail starts at "ü".
        assert_eq!(last_chars(&bytes[2..], 10), "ü€z");
        assert_eq!(last_chars(bytes, 2), "€z");
        assert_eq!(last_chars(bytes, 0), "");
        assert_eq!(last_chars(&[], 3), "");
    }
}
