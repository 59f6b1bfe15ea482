//! People: accounts, sessions and sharing, and the access every route grants each role.

mod access;
mod access_mcp;
mod accounts;
