//! Several `haico serve` processes on one PostgreSQL database, directly and behind nginx.

mod approvals;
mod cluster;
mod nginx;
mod people;
