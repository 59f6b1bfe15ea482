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

#[cfg(test)]
mod tests {
    use super::*;

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
