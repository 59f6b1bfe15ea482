//! The workspace never forgets: every committed change is a numbered revision, and the
//! workspace at any revision can be rebuilt, compared, restored, undone by turn, or forked.
//!
//! Recording happens in [`Edit::commit`](super::Edit::commit), inside the change's own
//! transaction: one revision row (who, which turn and tool, why, which panels, what), and per
//! changed panel what the write methods journaled — the operations that turn the previous
//! revision's state into this one — or, every so often, the panel's whole state. A whole state
//! is stored when the chain since the last one reaches [`MAX_CHAIN`] records or outweighs the
//! last whole state (and at least [`MIN_WHOLE_BYTES`]), so history grows with what changed, not
//! with a panel's size, and a read replays at most [`MAX_CHAIN`] records.

mod fork;
pub(crate) mod reads;
pub(crate) mod replay;
pub(crate) mod restore;

pub(super) use reads::conflicts;
pub use reads::{DocumentDiff, HistoryPage};
use replay::documents_at;
pub(super) use replay::{document_at, suggestions_at, workspace_at};
pub use restore::{RESTORABLE, restorable_panels};

pub use crate::workspace::revision::{MAX_CHAIN, MIN_WHOLE_BYTES};
/// How long a document diff may search for the smallest difference.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(15);
/// How many revisions a history page lists when no limit is given.
pub const HISTORY_DEFAULT: i64 = 50;
/// The largest history page.
pub const HISTORY_MAX: i64 = 500;
