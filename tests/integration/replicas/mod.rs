//! Several `haico serve` processes on one PostgreSQL database, directly and behind nginx.

mod cluster;
mod nginx;
