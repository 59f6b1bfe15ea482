//! The `study` event (issue 42): a participant's session changed in a way the open page must
//! show at once (the time is nearly up, the session ended). Stored in the thread's event log
//! like every other event, so it reaches the page on every replica and after a reconnect.

use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::revision::ChangeNote,
    workspace::service::Workspaces,
};
use haico_store::{NewEvent, ThreadId};

impl Workspaces {
    /// Appends a `study` event with `data` to `thread`'s log; it changes no panel and makes
    /// no revision.
    pub async fn announce_study(
        &self,
        thread: &ThreadId,
        data: &serde_json::Value,
    ) -> Result<(), WorkspaceError> {
        let mut edit = self.edit(thread, Source::User).await?;
        edit.announce(NewEvent {
            event: "study",
            data: data.to_string(),
        });
        edit.commit(ChangeNote::default()).await.map(|_| ())
    }
}
