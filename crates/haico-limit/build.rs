//! `sqlx::migrate!` embeds haico's migrations when this crate compiles; without this, a
//! migration added later would not rebuild it, and the limit would run on last week's schema.
fn main() {
    println!("cargo:rerun-if-changed=../haico-store/migrations");
}
