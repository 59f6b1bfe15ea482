//! What a session measures, and the summary per condition. Everything comes from what the
//! session's thread keeps anyway (its recording, its document at each revision, its
//! suggestions), so a measure can always be recomputed from an export.
//!
//! Who wrote a revision: the agent (`source: agent`), the participant (`by:
//! participant:<ref>`), else the task's seed (written when the thread was made). Characters of
//! the document are counted in Unicode code points; each character of the final document
//! belongs to whoever last inserted it (a character diff from each document revision to the
//! next), which gives `final_doc_authorship`. A suggestion the participant accepts is written
//! by the participant's acceptance, so its text counts as the participant's; the suggestion
//! measures say how much of that came from the agent.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::studies::service::StudyError;
use haico_core::{workspace::SuggestionStatus, workspace::Workspaces, workspace::recording::Line};
use haico_store::{SessionRow, ThreadId};

/// Who wrote something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Author {
    Seed,
    Participant,
    Agent,
}

/// A session's measures.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Measures {
    /// Seconds from Start to the end (to now while it runs).
    pub time_on_task_s: Option<f64>,
    /// Agent turns.
    pub turns: i64,
    /// The agent's tool calls.
    pub tool_calls: i64,
    /// Those that failed.
    pub failed_tool_calls: i64,
    /// Revisions made by the participant.
    pub participant_revisions: i64,
    /// Revisions made by the agent.
    pub agent_revisions: i64,
    /// Document characters the participant inserted.
    pub participant_chars_inserted: i64,
    /// Document characters the participant deleted.
    pub participant_chars_deleted: i64,
    /// Document characters the agent inserted.
    pub agent_chars_inserted: i64,
    /// Document characters the agent deleted.
    pub agent_chars_deleted: i64,
    /// Shares of the final document by who last wrote each character (sum 1; `None` for an
    /// empty document).
    pub final_doc_authorship: Option<Authorship>,
    /// Suggestions the agent made (suggest mode).
    pub suggestions_made: i64,
    /// Of those, accepted.
    pub suggestions_accepted: i64,
    /// Of those, rejected.
    pub suggestions_rejected: i64,
    /// Accepted of decided (`None` before any decision).
    pub acceptance_rate: Option<f64>,
    /// Model calls.
    pub model_calls: i64,
    /// Prompt tokens, as the provider reported them.
    pub prompt_tokens: i64,
    /// Completion tokens, as the provider reported them.
    pub completion_tokens: i64,
}

/// Shares of the final document.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Authorship {
    /// Written by the task's seed.
    pub seed: f64,
    /// Written by the participant.
    pub participant: f64,
    /// Written by the agent.
    pub agent: f64,
}

/// The numeric measures, by name, as the summary and the CSV list them.
pub const NUMERIC: [&str; 16] = [
    "time_on_task_s",
    "turns",
    "tool_calls",
    "failed_tool_calls",
    "participant_revisions",
    "agent_revisions",
    "participant_chars_inserted",
    "participant_chars_deleted",
    "agent_chars_inserted",
    "agent_chars_deleted",
    "participant_share",
    "agent_share",
    "suggestions_made",
    "acceptance_rate",
    "prompt_tokens",
    "completion_tokens",
];

impl Measures {
    /// The value of the numeric measure `name` (`None` when it has none).
    #[allow(clippy::cast_precision_loss)]
    pub fn value(&self, name: &str) -> Option<f64> {
        Some(match name {
            "time_on_task_s" => return self.time_on_task_s,
            "turns" => self.turns as f64,
            "tool_calls" => self.tool_calls as f64,
            "failed_tool_calls" => self.failed_tool_calls as f64,
            "participant_revisions" => self.participant_revisions as f64,
            "agent_revisions" => self.agent_revisions as f64,
            "participant_chars_inserted" => self.participant_chars_inserted as f64,
            "participant_chars_deleted" => self.participant_chars_deleted as f64,
            "agent_chars_inserted" => self.agent_chars_inserted as f64,
            "agent_chars_deleted" => self.agent_chars_deleted as f64,
            "participant_share" => return self.final_doc_authorship.map(|a| a.participant),
            "agent_share" => return self.final_doc_authorship.map(|a| a.agent),
            "suggestions_made" => self.suggestions_made as f64,
            "acceptance_rate" => return self.acceptance_rate,
            "prompt_tokens" => self.prompt_tokens as f64,
            "completion_tokens" => self.completion_tokens as f64,
            _ => return None,
        })
    }
}

/// The author of a revision line.
fn author_of(source: &str, by: Option<&str>) -> Author {
    if source == "agent" {
        Author::Agent
    } else if by.is_some_and(|by| by.starts_with("participant:")) {
        Author::Participant
    } else {
        Author::Seed
    }
}

/// The measures of `session`, from its thread's recording `lines` (read by the caller, which
/// may export them too) and its document and suggestions.
pub async fn measure(
    workspaces: &Workspaces,
    session: &SessionRow,
    lines: &[Line],
    now: DateTime<Utc>,
) -> Result<Measures, StudyError> {
    let mut m = Measures {
        time_on_task_s: session.started_at.map(|started| {
            let end = session.ended_at.unwrap_or(now);
            #[allow(clippy::cast_precision_loss)]
            let ms = (end - started).num_milliseconds() as f64;
            ms / 1000.0
        }),
        ..Measures::default()
    };
    let mut document_revs = Vec::new();
    for line in lines {
        match line {
            Line::Turn { usage, .. } => {
                m.turns += 1;
                if let Some(usage) = usage {
                    m.model_calls += i64::from(usage.model_calls);
                    m.prompt_tokens +=
                        i64::try_from(usage.prompt_tokens.unwrap_or(0)).unwrap_or(i64::MAX);
                    m.completion_tokens +=
                        i64::try_from(usage.completion_tokens.unwrap_or(0)).unwrap_or(i64::MAX);
                }
            }
            Line::Step { success, .. } => {
                m.tool_calls += 1;
                if !success {
                    m.failed_tool_calls += 1;
                }
            }
            Line::Revision {
                rev,
                source,
                by,
                panels,
                ..
            } => {
                let author = author_of(source, by.as_deref());
                match author {
                    Author::Agent => m.agent_revisions += 1,
                    Author::Participant => m.participant_revisions += 1,
                    Author::Seed => {}
                }
                if panels.iter().any(|p| p == "document") {
                    document_revs.push((*rev, author));
                }
            }
            _ => {}
        }
    }
    let Some(thread) = session
        .thread_id
        .as_deref()
        .and_then(|t| ThreadId::parse(t).ok())
    else {
        return Ok(m);
    };
    let mut view = match workspaces.view(&thread).await {
        Ok(view) => view,
        Err(haico_core::workspace::WorkspaceError::UnknownThread(_)) => return Ok(m),
        Err(err) => return Err(err.into()),
    };
    let read = async {
        let mut documents = Vec::with_capacity(document_revs.len());
        for (rev, author) in &document_revs {
            let content = view
                .document_at(*rev)
                .await?
                .map(|d| d.content)
                .unwrap_or_default();
            documents.push((content, *author));
        }
        let suggestions = view.suggestions(None).await?;
        Ok::<_, haico_core::workspace::WorkspaceError>((documents, suggestions))
    }
    .await;
    view.close().await;
    let (documents, suggestions) = read?;
    // Who wrote each character of the document, revision by revision.
    let mut owners: Vec<Author> = Vec::new();
    let mut previous = String::new();
    for (content, author) in &documents {
        let diff = TextDiff::from_chars(previous.as_str(), content.as_str());
        let mut next = Vec::with_capacity(content.chars().count());
        let mut at = 0usize;
        let (mut inserted, mut deleted) = (0i64, 0i64);
        for change in diff.iter_all_changes() {
            let n = change.value().chars().count();
            match change.tag() {
                ChangeTag::Equal => {
                    next.extend(owners.iter().skip(at).take(n).copied());
                    at += n;
                }
                ChangeTag::Delete => {
                    at += n;
                    deleted += i64::try_from(n).unwrap_or(0);
                }
                ChangeTag::Insert => {
                    next.extend(std::iter::repeat_n(*author, n));
                    inserted += i64::try_from(n).unwrap_or(0);
                }
            }
        }
        match author {
            Author::Participant => {
                m.participant_chars_inserted += inserted;
                m.participant_chars_deleted += deleted;
            }
            Author::Agent => {
                m.agent_chars_inserted += inserted;
                m.agent_chars_deleted += deleted;
            }
            Author::Seed => {}
        }
        owners = next;
        previous.clone_from(content);
    }
    if !owners.is_empty() {
        #[allow(clippy::cast_precision_loss)]
        let total = owners.len() as f64;
        #[allow(clippy::cast_precision_loss)]
        let share = |who: Author| owners.iter().filter(|a| **a == who).count() as f64 / total;
        m.final_doc_authorship = Some(Authorship {
            seed: share(Author::Seed),
            participant: share(Author::Participant),
            agent: share(Author::Agent),
        });
    }
    for listed in &suggestions {
        m.suggestions_made += 1;
        match listed.suggestion.status {
            SuggestionStatus::Accepted => m.suggestions_accepted += 1,
            SuggestionStatus::Rejected => m.suggestions_rejected += 1,
            SuggestionStatus::Open | SuggestionStatus::Outdated => {}
        }
    }
    let decided = m.suggestions_accepted + m.suggestions_rejected;
    if decided > 0 {
        #[allow(clippy::cast_precision_loss)]
        let rate = m.suggestions_accepted as f64 / decided as f64;
        m.acceptance_rate = Some(rate);
    }
    Ok(m)
}

/// `n`, mean, standard deviation (sample) and median of some values.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Stats {
    /// How many values.
    pub n: usize,
    /// Their mean.
    pub mean: Option<f64>,
    /// Their sample standard deviation (`None` below two values).
    pub sd: Option<f64>,
    /// Their median.
    pub median: Option<f64>,
}

/// The statistics of `values`.
#[allow(clippy::cast_precision_loss)]
pub fn stats(values: &[f64]) -> Stats {
    let n = values.len();
    if n == 0 {
        return Stats {
            n,
            mean: None,
            sd: None,
            median: None,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = (n > 1).then(|| {
        let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        (squares / (n - 1) as f64).sqrt()
    });
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])
    };
    Stats {
        n,
        mean: Some(mean),
        sd,
        median: Some(median),
    }
}

/// The summary of one condition: sessions by status, and each measure's statistics over its
/// finished sessions (completed or timed out).
pub fn summarise(sessions: &[(&SessionRow, &Measures)]) -> Value {
    let mut flow: BTreeMap<&str, i64> = BTreeMap::new();
    for (session, _) in sessions {
        *flow.entry(session.status.as_str()).or_insert(0) += 1;
    }
    let finished: Vec<&Measures> = sessions
        .iter()
        .filter(|(s, _)| matches!(s.status.as_str(), "completed" | "timed_out"))
        .map(|(_, m)| *m)
        .collect();
    let mut measures = serde_json::Map::new();
    for name in NUMERIC {
        let values: Vec<f64> = finished.iter().filter_map(|m| m.value(name)).collect();
        measures.insert(
            name.to_string(),
            serde_json::to_value(stats(&values)).unwrap_or(Value::Null),
        );
    }
    serde_json::json!({"flow": flow, "measures": measures})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_a_few_values() {
        let s = stats(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, Some(5.0));
        assert!((s.sd.unwrap() - 2.138_089_935).abs() < 1e-6);
        assert_eq!(s.median, Some(4.5));
        let one = stats(&[3.0]);
        assert_eq!((one.mean, one.sd, one.median), (Some(3.0), None, Some(3.0)));
        assert_eq!(stats(&[]).mean, None);
    }
}
