//! What stands between a request and its handler: where it may come from ([`origin`]), who it
//! is ([`identify`], the middleware), what it may do ([`authorized`]: the `Authorized<…>`
//! extractor each handler names, applying [`crate::people::may`]), how often ([`limits`]), and
//! the administrator's token ([`auth`]).

pub mod auth;
pub mod authorized;
pub mod identify;
pub mod limits;
pub mod origin;

pub use authorized::{
    Administer, Anyone, Asks, Authorized, CallTool, Chat, Delete, Edit, ManageSharing, Read,
    SignInAllowed, TurnAllowed, UseServer,
};
pub use identify::{ACCESS_TOKEN_PARAM, SESSION_COOKIE, TokenInQuery};
