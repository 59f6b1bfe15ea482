//! Storage: connection handling, outages, crashes, unreachable databases and lock races.

mod connections;
mod db_outage;
mod document_race;
mod kill9;
mod lock_race;
mod migrations;
mod round_trips;
mod thread_delete;
mod unreachable;
