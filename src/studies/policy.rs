//! A condition as the agent's per-thread policy: the agent asks, once per turn, what the
//! thread's condition allows (`agent::TurnPolicies`). A thread that is no participant's gets
//! the server's configuration.

use super::service::{Studies, design_of};
use crate::{agent::TurnPolicies, agent::TurnPolicy};
use haico_store::ThreadId;

/// The studies, asked by the agent for the condition of a turn's thread.
#[derive(Debug, Clone)]
pub struct ConditionPolicies(pub Studies);

#[async_trait::async_trait]
impl TurnPolicies for ConditionPolicies {
    async fn policy(&self, thread: &ThreadId) -> Result<Option<TurnPolicy>, String> {
        let studies = &self.0;
        if !studies
            .is_participant_thread(thread)
            .await
            .map_err(|err| err.to_string())?
        {
            return Ok(None);
        }
        let mut repo = studies
            .db
            .autocommit_read()
            .await
            .map_err(|err| err.to_string())?;
        let found = async {
            let Some(session) = repo.studies().session_of_thread(thread.as_str()).await? else {
                return Ok(None);
            };
            let study = repo.studies().study(&session.study_id).await?;
            Ok::<_, haico_store::StoreError>(study.map(|study| (session, study)))
        }
        .await;
        let _ = repo.rollback().await;
        let Some((session, study)) = found.map_err(|err| err.to_string())? else {
            return Ok(None);
        };
        let design = design_of(&study).map_err(|err| err.to_string())?;
        let Some(condition) = session
            .condition_key
            .as_deref()
            .and_then(|key| design.condition(key))
        else {
            return Err("the session's condition is not in its study's design".to_string());
        };
        Ok(Some(TurnPolicy {
            tools: condition.tool_names(),
            // A plain chat sees no workspace at all.
            snapshot: !condition.is_plain_chat(),
            #[allow(clippy::cast_possible_truncation)]
            temperature: condition.temperature.map(|t| t as f32),
            max_tool_calls: condition
                .max_steps
                .and_then(|steps| usize::try_from(steps).ok()),
            system_prompt: condition.system_prompt.clone(),
        }))
    }
}
