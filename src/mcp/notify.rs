//! Resource notifications, driven by the thread's event log.
//!
//! Every change to a panel — by an MCP client, the agent, the web UI or another process — is
//! logged as a `workspace` event `{panels, source}` (see [`crate::events`]). A follower reads
//! the thread's events through [`subscribe`](crate::events::subscribe) and turns each
//! `workspace` event into `notifications/resources/updated` for the panel resources the client
//! subscribed to, plus `notifications/resources/list_changed` when the artifacts changed (new
//! artifacts are new resources).
//!
//! Two audiences, one per protocol generation:
//! - a **session** (protocol versions up to 2025-11-25): the client subscribes with
//!   `resources/subscribe` and the notifications go to the session's peer;
//! - a **listener** (2026-07-28): the client opens `subscriptions/listen` with the URIs it
//!   wants, and the notifications go out on that request's stream until it is cancelled.

use std::{
    collections::HashSet,
    future::Future,
    sync::{Arc, Mutex},
};

use futures::{Stream, StreamExt};
use rmcp::{Peer, RoleServer, model::ResourceUpdatedNotificationParam, service::SubscriptionSink};
use serde::Deserialize;

use super::{
    resources::{history_uri, panel_uri},
    sessions::McpSessions,
};
use haico_core::{events::LiveEvent, events::SubscribeError};
use haico_store::{ThreadId, panels::Panel, panels::PanelSet};

/// The panels a `workspace` event says changed; `None` for every other event.
pub fn workspace_panels(event: &LiveEvent) -> Option<PanelSet> {
    #[derive(Deserialize)]
    struct Workspace {
        panels: Vec<String>,
    }
    if event.event != "workspace" {
        return None;
    }
    let data: Workspace = serde_json::from_str(&event.data).ok()?;
    Some(
        data.panels
            .iter()
            .filter_map(|name| Panel::ALL.into_iter().find(|p| p.as_str() == name))
            .collect(),
    )
}

/// Who hears about changes, and which ones.
#[derive(Debug, Clone)]
pub enum Audience {
    /// A session that subscribed with `resources/subscribe`: the set is read at every change,
    /// so later (un)subscriptions count at once.
    Session {
        /// The client.
        peer: Peer<RoleServer>,
        /// The subscribed URIs.
        subscribed: Arc<Mutex<HashSet<String>>>,
        /// Over HTTP, the stored session: its subscriptions are re-read at every change, since
        /// the client may have subscribed through another replica.
        stored: Option<(McpSessions, String)>,
    },
    /// A `subscriptions/listen` request; its accepted filter says what it wants.
    Listener(SubscriptionSink),
}

/// The client is gone; stop following.
struct Gone;

impl Audience {
    /// Reads a stored session's subscriptions again. When the database cannot be read, the
    /// subscriptions known here still count.
    async fn refresh(&self) {
        let Audience::Session {
            subscribed,
            stored: Some((sessions, id)),
            ..
        } = self
        else {
            return;
        };
        match sessions.subscriptions(id).await {
            Ok(uris) => {
                if let Ok(mut set) = subscribed.lock() {
                    *set = uris;
                }
            }
            Err(err) => tracing::warn!(error = %err, "reading a session's subscriptions"),
        }
    }

    fn wants_update(&self, uri: &str) -> bool {
        match self {
            Audience::Session { subscribed, .. } => {
                subscribed.lock().is_ok_and(|set| set.contains(uri))
            }
            Audience::Listener(sink) => sink
                .accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri)),
        }
    }

    fn wants_list_changed(&self) -> bool {
        match self {
            // The capability is declared, so a session hears about new resources always.
            Audience::Session { .. } => true,
            Audience::Listener(sink) => sink.accepted().resources_list_changed == Some(true),
        }
    }

    async fn updated(&self, uri: String) -> Result<(), Gone> {
        match self {
            Audience::Session { peer, .. } => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .map_err(|_| Gone),
            Audience::Listener(sink) => sink.notify_resource_updated(uri).await.map_err(|_| Gone),
        }
    }

    async fn list_changed(&self) -> Result<(), Gone> {
        match self {
            Audience::Session { peer, .. } => {
                peer.notify_resource_list_changed().await.map_err(|_| Gone)
            }
            Audience::Listener(sink) => sink.notify_resource_list_changed().await.map_err(|_| Gone),
        }
    }
}

/// Turns `events` (a subscription to `thread`'s events) into notifications for `audience`
/// until `stop` resolves, the events end or the client is gone. Fails only when the event log
/// cannot be read.
pub async fn follow<S>(
    events: S,
    thread: ThreadId,
    audience: Audience,
    stop: impl Future<Output = ()>,
) -> Result<(), SubscribeError>
where
    S: Stream<Item = Result<Arc<LiveEvent>, SubscribeError>>,
{
    let mut events = std::pin::pin!(events);
    let mut stop = std::pin::pin!(stop);
    loop {
        let item = tokio::select! {
            () = &mut stop => return Ok(()),
            item = events.next() => item,
        };
        let Some(item) = item else {
            return Ok(());
        };
        let event = item?;
        let Some(panels) = workspace_panels(&event) else {
            continue;
        };
        audience.refresh().await;
        let uris = panels
            .iter()
            .map(|panel| panel_uri(&thread, panel))
            .chain([history_uri(&thread)]);
        for uri in uris {
            if audience.wants_update(&uri) && audience.updated(uri).await.is_err() {
                return Ok(());
            }
        }
        if panels.contains(Panel::Artifacts)
            && audience.wants_list_changed()
            && audience.list_changed().await.is_err()
        {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_panels_of_workspace_events_only() {
        let event = |name: &str, data: &str| LiveEvent {
            seq: Some(1),
            event: name.into(),
            data: data.into(),
        };
        let panels = workspace_panels(&event(
            "workspace",
            r#"{"panels":["plan","artifacts","bogus"],"source":"user"}"#,
        ));
        let expected: PanelSet = [Panel::Plan, Panel::Artifacts].into_iter().collect();
        assert_eq!(panels, Some(expected));
        assert_eq!(
            workspace_panels(&event("step", r#"{"panels":["plan"]}"#)),
            None
        );
        assert_eq!(workspace_panels(&event("workspace", "not json")), None);
    }
}
