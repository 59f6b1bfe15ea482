//! Shapes only the REST API publishes: the conversation as `GET …/messages` answers it, and
//! accounts and members. Each is made from the store's row by `From`; the shapes several
//! adapters share are `crate::wire`'s.

mod conversation;
mod people;

pub use conversation::{MessageRecord, TurnRecord};
pub use people::{Member, User};

pub use crate::wire::list;
