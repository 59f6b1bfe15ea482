//! What a participant's token reaches: the REST, chat and events routes of its own thread,
//! and of those only the panels its condition shows. Everything else (other threads, the
//! thread list, studies, MCP, accounts, the tools endpoint, history, exports, forks) does not
//! exist for it. One table, asked by the HTTP layer's access guard for every route.

/// What a participant may do with a route of its own thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParticipantRoute {
    /// Allowed: a read, or a change (`true`) that the clock must allow too.
    Allowed {
        /// Whether the route changes the thread.
        writes: bool,
    },
    /// A panel the condition hides (`403`).
    HiddenPanel,
    /// Not for participants (`404`, as if it did not exist).
    Unknown,
}

/// The routes of its own thread a participant may call, with the panel each belongs to
/// (`None`: no panel, e.g. the conversation).
const ROUTES: &[(&str, &str, Option<&str>)] = &[
    ("GET", "/api/threads/{thread_id}", None),
    ("GET", "/api/threads/{thread_id}/workspace", None),
    ("GET", "/api/threads/{thread_id}/messages", None),
    ("GET", "/api/threads/{thread_id}/events", None),
    ("POST", "/api/threads/{thread_id}/chat", None),
    ("POST", "/api/threads/{thread_id}/cancel", None),
    (
        "GET",
        "/api/threads/{thread_id}/objective",
        Some("objective"),
    ),
    (
        "PUT",
        "/api/threads/{thread_id}/objective",
        Some("objective"),
    ),
    ("GET", "/api/threads/{thread_id}/document", Some("document")),
    ("PUT", "/api/threads/{thread_id}/document", Some("document")),
    (
        "GET",
        "/api/threads/{thread_id}/suggestions",
        Some("document"),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept",
        Some("document"),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
        Some("document"),
    ),
    ("GET", "/api/threads/{thread_id}/todos", Some("plan")),
    ("POST", "/api/threads/{thread_id}/todos", Some("plan")),
    (
        "PATCH",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Some("plan"),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/todos/{todo_id}",
        Some("plan"),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/preferences",
        Some("preferences"),
    ),
    (
        "POST",
        "/api/threads/{thread_id}/preferences",
        Some("preferences"),
    ),
    (
        "PATCH",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Some("preferences"),
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/preferences/{preference_id}",
        Some("preferences"),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts",
        Some("artifacts"),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}",
        Some("artifacts"),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
        Some("artifacts"),
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.png",
        Some("artifacts"),
    ),
];

/// What a participant whose condition shows `panels` may do with `method` on the route
/// template `route` of its own thread.
pub fn participant_route(method: &str, route: &str, panels: &[String]) -> ParticipantRoute {
    let Some((_, _, panel)) = ROUTES.iter().find(|(m, r, _)| *m == method && *r == route) else {
        return ParticipantRoute::Unknown;
    };
    match panel {
        Some(panel) if !panels.iter().any(|p| p == panel) => ParticipantRoute::HiddenPanel,
        _ => ParticipantRoute::Allowed {
            writes: method != "GET",
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_panel_is_forbidden_and_other_routes_do_not_exist() {
        let doc = vec!["document".to_string()];
        assert_eq!(
            participant_route("PUT", "/api/threads/{thread_id}/document", &doc),
            ParticipantRoute::Allowed { writes: true }
        );
        assert_eq!(
            participant_route("POST", "/api/threads/{thread_id}/todos", &doc),
            ParticipantRoute::HiddenPanel
        );
        assert_eq!(
            participant_route("GET", "/api/threads/{thread_id}/export", &doc),
            ParticipantRoute::Unknown
        );
        assert_eq!(
            participant_route("POST", "/api/threads/{thread_id}/chat", &[]),
            ParticipantRoute::Allowed { writes: true }
        );
    }
}
