//! The statements many ops share: the change log every write ends with, the thread lock every
//! agent write begins with, the plan's length, and random positions in it.

use anyhow::Result;
use chrono::Utc;

use super::{Call, Exec, P, pick};
use crate::sql;

/// The JSON a `workspace` event carries for `panel`.
pub(super) fn workspace_event(panel: &str) -> String {
    let data = format!(r#"{{"panels":["{panel}"],"source":"agent"}}"#);
    serde_json::json!([{ "event": "workspace", "data": data }]).to_string()
}

/// Logs the change (revision, first panel record, events, touch): the statement every write
/// call ends with.
/// Returns the revision's number.
pub(super) async fn log_change(
    exec: &mut impl Exec,
    call: &Call,
    turn: i64,
    panel: &str,
    record: Option<(bool, String)>,
    (events, event_count): (String, i64),
    artifact: Option<i64>,
) -> Result<i64> {
    let now = Utc::now();
    let turn = exec.ridden_turn().unwrap_or(turn);
    let size = record
        .as_ref()
        .map_or(0, |(_, data)| i64::try_from(data.len()).unwrap_or(0));
    let (record_panel, whole, data) = match record {
        Some((whole, data)) => (P::Text(panel.to_string()), P::Bool(whole), P::Text(data)),
        None => (P::NullText, P::Bool(false), P::NullText),
    };
    let mut params = vec![
        P::Text(call.thread.clone()),
        P::Time(now),
        P::Text("agent".into()),
        P::NullText,
        P::NullInt,
        P::Int(turn),
        P::Text(call.op.tool().into()),
        P::Text(format!(
            "Load test: exercising {} on a busy thread.",
            call.op.tool()
        )),
        P::Text(format!(r#"["{panel}"]"#)),
        P::Text(format!("{} changed the {panel}", call.op.tool())),
        P::NullInt,
        P::NullInt,
        record_panel,
        whole,
        data,
        P::Int(size),
        P::Int(event_count),
        P::Bool(true),
        P::Bool(true),
        P::Text(events),
        P::Time(now),
    ];
    // The artifacts' tag is a statement of its own on PostgreSQL, as on the server.
    if let Some(id) = artifact {
        params.push(P::Text(format!("[{id}]")));
    }
    let rows = if let Some(rows) = exec.log_and_commit(&params).await? {
        rows
    } else if exec.postgres() {
        let statement = if artifact.is_some() {
            sql::LOG_CHANGE_POSTGRES_STAMPING
        } else {
            sql::LOG_CHANGE_POSTGRES
        };
        exec.rows(statement, &params).await?
    } else {
        exec.rows(&sql::log_change_sqlite_batch(artifact.is_some()), &params)
            .await?
    };
    Ok(rows.first().map_or(0, |row| row[1]))
}

pub(super) fn thread(call: &Call) -> P {
    P::Text(call.thread.clone())
}

/// Logs a change of one panel with its record (`whole` state or operations) and its one
/// `workspace` event: how every panel write ends.
pub(super) async fn log_panel(
    exec: &mut impl Exec,
    call: &Call,
    turn: i64,
    panel: &str,
    whole: bool,
    record: String,
) -> Result<i64> {
    let event = workspace_event(panel);
    log_change(
        exec,
        call,
        turn,
        panel,
        Some((whole, record)),
        (event, 1),
        None,
    )
    .await
}

/// Takes the thread (and reads its turn counter), as every agent write does first.
pub(super) async fn lock(exec: &mut impl Exec, call: &Call) -> Result<i64> {
    if let Some(turn) = call.turn {
        return Ok(turn);
    }
    if exec.riding() {
        // Taken by the op's first statement; the log reads the turn it answered.
        return Ok(0);
    }
    let sql = pick(exec, sql::LOCK_THREAD);
    let rows = exec.rows(sql, &[thread(call)]).await?;
    Ok(rows.first().map_or(0, |row| row[0]))
}

/// The plan's length and its last key, in one statement, as the server reads them to add at
/// the end.
pub(super) async fn plan_tail(exec: &mut impl Exec, call: &Call) -> Result<(i64, Option<i64>)> {
    let rows = exec.rows(sql::PLAN_TAIL, &[thread(call)]).await?;
    Ok(rows
        .first()
        .map_or((0, None), |row| (row[0], (row[0] > 0).then_some(row[1]))))
}

pub(super) async fn plan_len(exec: &mut impl Exec, call: &Call) -> Result<i64> {
    let rows = exec.rows(sql::PLAN_LEN, &[thread(call)]).await?;
    Ok(rows.first().map_or(0, |row| row[0]))
}

/// Up to `count` distinct 0-based positions below `len`.
pub(super) fn positions(rng: &mut fastrand::Rng, len: i64, count: usize) -> Vec<i64> {
    let mut out = Vec::new();
    if len <= 0 {
        return out;
    }
    for _ in 0..count {
        let p = rng.i64(0..len);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}
