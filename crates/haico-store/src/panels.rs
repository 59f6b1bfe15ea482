//! The panels of a workspace, and sets of them: the unit in which changes are announced so each
//! client re-syncs only what moved. Also the one word of a panel's vocabulary every layer
//! shares: a preference's [`PreferenceKind`] (stored, published, and a tool argument).

use serde::{Deserialize, Serialize, Serializer, ser::SerializeSeq};

/// One panel of the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Panel {
    /// The one-line objective.
    Objective,
    /// The working document.
    Document,
    /// The todo outline.
    Plan,
    /// The user's constraints.
    Preferences,
    /// Charts and other typed outputs.
    Artifacts,
    /// The document mode and the agent's suggested document changes (issue 25).
    Suggestions,
}

impl Panel {
    /// Every panel, in display order.
    pub const ALL: [Panel; 6] = [
        Panel::Objective,
        Panel::Document,
        Panel::Plan,
        Panel::Preferences,
        Panel::Artifacts,
        Panel::Suggestions,
    ];

    /// The name used in events and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Panel::Objective => "objective",
            Panel::Document => "document",
            Panel::Plan => "plan",
            Panel::Preferences => "preferences",
            Panel::Artifacts => "artifacts",
            Panel::Suggestions => "suggestions",
        }
    }

    /// The panel with this name, as in events and the API.
    pub fn parse(name: &str) -> Option<Panel> {
        Panel::ALL.into_iter().find(|panel| panel.as_str() == name)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A panel is stored by its name (`panel_changes.panel`).
impl<'a> From<Panel> for crate::query::Value<'a> {
    fn from(value: Panel) -> Self {
        crate::query::Value::Text(Some(value.as_str()))
    }
}

/// A small set of panels; the repository fills one as it writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PanelSet(u8);

impl PanelSet {
    /// Adds a panel.
    pub fn insert(&mut self, panel: Panel) {
        self.0 |= panel.bit();
    }

    /// Whether the panel is in the set.
    pub fn contains(self, panel: Panel) -> bool {
        self.0 & panel.bit() != 0
    }

    /// Whether nothing changed.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The panels, in display order.
    pub fn iter(self) -> impl Iterator<Item = Panel> {
        Panel::ALL.into_iter().filter(move |p| self.contains(*p))
    }
}

impl FromIterator<Panel> for PanelSet {
    fn from_iter<I: IntoIterator<Item = Panel>>(iter: I) -> Self {
        let mut set = PanelSet::default();
        for panel in iter {
            set.insert(panel);
        }
        set
    }
}

impl Serialize for PanelSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for panel in self.iter() {
            seq.serialize_element(panel.as_str())?;
        }
        seq.end()
    }
}

/// Whether a preference must be honoured or only weighed.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PreferenceKind {
    /// A constraint the solution must satisfy.
    Hard,
    /// A wish to weigh against others.
    Soft,
}

impl PreferenceKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PreferenceKind::Hard => "hard",
            PreferenceKind::Soft => "soft",
        }
    }

    /// Reads the stored spelling; anything unknown is treated as soft, the weaker reading.
    pub fn from_stored(raw: &str) -> Self {
        if raw == "hard" {
            PreferenceKind::Hard
        } else {
            PreferenceKind::Soft
        }
    }
}

/// An enum of the stored vocabulary, each variant with its one spelling: the column's text,
/// the history's JSON and the wire's string are all [`as_str`](DocumentMode::as_str), and
/// reading one back is [`parse`](DocumentMode::parse) (serde goes through both).
macro_rules! spelled {
    (
        $(#[$meta:meta])*
        pub enum $name:ident as $what:literal {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored and wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value with this spelling.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<$name> for &'static str {
            fn from(value: $name) -> Self {
                value.as_str()
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;

            fn try_from(text: String) -> Result<Self, String> {
                $name::parse(&text).ok_or_else(|| format!("{text:?} is not a {}", $what))
            }
        }

        // Stored as its spelling.
        impl<'a> From<$name> for crate::query::Value<'a> {
            fn from(value: $name) -> Self {
                crate::query::Value::Text(Some(value.as_str()))
            }
        }

        // Read from a row by its spelling; a spelling the enum lacks is a decoding error.
        impl crate::query::Column for $name {
            fn from_postgres<I: sqlx::ColumnIndex<sqlx::postgres::PgRow>>(
                row: &sqlx::postgres::PgRow,
                at: I,
            ) -> Result<Self, sqlx::Error> {
                let text: String = sqlx::Row::try_get(row, at)?;
                $name::try_from(text).map_err(|why| sqlx::Error::Decode(why.into()))
            }

            fn from_inline<I: rusqlite::RowIndex>(
                row: &rusqlite::Row<'_>,
                at: I,
            ) -> rusqlite::Result<Self> {
                let text: String = row.get(at)?;
                $name::try_from(text).map_err(|why| {
                    rusqlite::Error::FromSqlConversionFailure(
                        0,
                        rusqlite::types::Type::Text,
                        why.into(),
                    )
                })
            }
        }
    };
}

pub(crate) use spelled;

spelled! {
    /// What the agent's document tools do on a thread.
    #[derive(Default)]
    pub enum DocumentMode as "document mode" {
        /// They change the document (the default).
        #[default]
        Direct = "direct",
        /// They make suggestions a person accepts or rejects.
        Suggest = "suggest",
    }
}

impl DocumentMode {
    /// Reads a stored mode; a missing or unknown one is `direct`, what every thread starts in.
    pub fn from_stored(raw: Option<&str>) -> Self {
        raw.and_then(DocumentMode::parse).unwrap_or_default()
    }
}

spelled! {
    /// Which of the document tools a suggestion stands for: the shape of the change it keeps.
    pub enum SuggestionKind as "suggestion kind" {
        /// `edit_document`: exact passages replaced.
        Edit = "edit",
        /// `append_to_document`: text added at the end.
        Append = "append",
        /// `update_document`: a whole new body.
        Replace = "replace",
    }
}

spelled! {
    /// Where a suggestion stands.
    pub enum SuggestionStatus as "suggestion status" {
        /// Waiting for a person.
        Open = "open",
        /// Applied to the document.
        Accepted = "accepted",
        /// Turned down.
        Rejected = "rejected",
        /// Its text no longer matched the document when someone tried to accept it.
        Outdated = "outdated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip_through_serde() {
        fn round_trip<T>(all: &[T], spelled: impl Fn(T) -> &'static str)
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize + serde::de::DeserializeOwned,
        {
            for &value in all {
                let json = serde_json::to_string(&value).unwrap_or_default();
                assert_eq!(json, format!("\"{}\"", spelled(value)));
                assert_eq!(serde_json::from_str::<T>(&json).ok(), Some(value));
            }
        }
        round_trip(DocumentMode::ALL, DocumentMode::as_str);
        round_trip(SuggestionKind::ALL, SuggestionKind::as_str);
        round_trip(SuggestionStatus::ALL, SuggestionStatus::as_str);
        assert_eq!(
            SuggestionStatus::parse("accepted"),
            Some(SuggestionStatus::Accepted)
        );
        assert_eq!(SuggestionKind::parse("Edit"), None);
        assert_eq!(
            serde_json::from_str::<SuggestionKind>("\"move\"")
                .err()
                .map(|e| e.to_string()),
            Some("\"move\" is not a suggestion kind".to_string())
        );
        assert_eq!(DocumentMode::from_stored(None), DocumentMode::Direct);
        assert_eq!(
            DocumentMode::from_stored(Some("suggest")),
            DocumentMode::Suggest
        );
    }

    #[test]
    #[allow(clippy::expect_used)]
    fn study_and_session_statuses_are_read_from_rows_by_their_spelling() {
        use crate::query::Column;
        use crate::studies::{SessionStatus, StudyStatus};

        assert_eq!(StudyStatus::ALL.len(), 3);
        assert_eq!(SessionStatus::TimedOut.to_string(), "timed_out");
        let conn = rusqlite::Connection::open_in_memory().expect("an in-memory database");
        let read = |sql: &str| {
            conn.query_row(sql, [], |row| {
                Ok((
                    <StudyStatus as Column>::from_inline(row, 0),
                    <SessionStatus as Column>::from_inline(row, 1),
                ))
            })
            .expect("the row")
        };
        let (study, session) = read("SELECT 'open', 'timed_out'");
        assert_eq!(study.ok(), Some(StudyStatus::Open));
        assert_eq!(session.ok(), Some(SessionStatus::TimedOut));
        // A spelling the enum lacks is an error that names it, never a default.
        let (study, session) = read("SELECT 'Open', 'paused'");
        let study = study.err().map(|e| e.to_string()).unwrap_or_default();
        let session = session.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(study.contains("\"Open\" is not a study status"), "{study}");
        assert!(
            session.contains("\"paused\" is not a session status"),
            "{session}"
        );
    }

    #[test]
    fn keeps_display_order_and_serializes_names() {
        let set: PanelSet = [Panel::Artifacts, Panel::Objective].into_iter().collect();
        assert_eq!(
            serde_json::to_string(&set).unwrap_or_default(),
            r#"["objective","artifacts"]"#
        );
        assert!(!set.contains(Panel::Plan));
        assert!(PanelSet::default().is_empty());
    }
}
