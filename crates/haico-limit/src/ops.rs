//! One tool call of the mixed workload as the statements the server sends for it, written
//! once over [`Exec`] so every driver runs the same sequence. Transactions are the driver's
//! business: a write op runs inside a write transaction, a read op inside a read snapshot.
//!
//! What is left out, on purpose: everything above the driver (HTTP, JSON, argument checks,
//! the envelope, events on the bus), the once-a-second checks the server caches (is there
//! any user account; expired turn leases) and the envelope's text. Results are read (every
//! row fetched) but only integers are kept, for the ids and counts later statements need.

use anyhow::Result;
use chrono::{DateTime, Utc};
use haico_load::workload::{MAX_PREFERENCES, MAX_TODOS, Op};

use crate::sql;

mod shared;

use shared::{lock, log_change, log_panel, plan_len, plan_tail, positions, thread};

/// A statement parameter, typed as the server binds it (PostgreSQL wants typed nulls).
#[derive(Debug, Clone)]
pub enum P {
    Int(i64),
    Text(String),
    Bool(bool),
    Time(DateTime<Utc>),
    NullInt,
    NullText,
    NullBool,
}

/// A connection inside its transaction.
pub trait Exec {
    /// Whether this is PostgreSQL (picks the engine's variant of a statement).
    fn postgres(&self) -> bool;
    /// Runs `sql`, fetches every row and returns each row's first two columns where they are
    /// integers (else 0).
    async fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<[i64; 2]>>;
    /// Runs the change log with `params` and commits in the same round trip, as the server's
    /// agent writes do on PostgreSQL (`EXECUTE haico_log_change(…); COMMIT`); `None` where
    /// the connection cannot (the caller then runs the statement and the driver commits).
    async fn log_and_commit(&mut self, params: &[P]) -> Result<Option<Vec<[i64; 2]>>> {
        let _ = params;
        Ok(None)
    }
    /// Whether the thread's lock is still to be taken, by the next statement, as the server's
    /// agent writes take it on PostgreSQL (`Lent::begin_with_then`).
    fn riding(&self) -> bool {
        false
    }
    /// The turn counter the lock read with the first statement, once it did.
    fn ridden_turn(&self) -> Option<i64> {
        None
    }
}

fn pick<'a>(exec: &impl Exec, pair: (&'a str, &'a str)) -> &'a str {
    if exec.postgres() { pair.1 } else { pair.0 }
}

/// What one call needs besides the connection (owned, so it can move to a connection thread).
pub struct Call {
    pub op: Op,
    pub thread: String,
    pub seq: u64,
    pub rng: fastrand::Rng,
    /// Preferences the thread holds (approximately; tracked by the caller).
    pub preferences: i64,
    /// Steps the thread's plan holds (approximately; tracked by the caller, as `haico-load`'s
    /// generator tracks them to choose between adding and removing).
    pub todos: i64,
    /// The thread's artifact ids seen so far (for `get_artifact`).
    pub artifact: Option<i64>,
    /// The turn counter, when the driver read it (and took the thread) with its `BEGIN`.
    pub turn: Option<i64>,
}

/// What a call teaches the caller about the thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct Learned {
    pub preferences: Option<i64>,
    pub todos: Option<i64>,
    pub artifact: Option<i64>,
}

/// Does whether `op` writes (so runs in a write transaction).
pub fn writes(op: Op) -> bool {
    !matches!(
        op,
        Op::ListTodos | Op::ListPreferences | Op::ListArtifacts | Op::GetArtifact
    )
}

/// Runs one call's statements.
pub async fn run(exec: &mut impl Exec, call: &mut Call) -> Result<Learned> {
    let now = || P::Time(Utc::now());
    let mut learned = Learned::default();
    match call.op {
        // One statement each, the thread checked in it, as the server's read-only tools do
        // (the plan on SQLite: the thread, then the plan, inline).
        Op::ListTodos if exec.postgres() => {
            exec.rows(sql::PLAN_ON_THREAD, &[thread(call)]).await?;
        }
        Op::ListTodos => {
            exec.rows(sql::READ_THREAD, &[thread(call)]).await?;
            exec.rows(pick(exec, sql::LIST_STEPS), &[thread(call)])
                .await?;
        }
        Op::ListPreferences => {
            let rows = exec
                .rows(sql::PREFERENCES_ON_THREAD, &[thread(call)])
                .await?;
            learned.preferences = Some(rows.len() as i64);
        }
        Op::ListArtifacts => {
            exec.rows(
                sql::ARTIFACTS_ON_THREAD,
                &[thread(call), P::NullText, P::Int(10)],
            )
            .await?;
        }
        Op::GetArtifact => {
            let id = call.artifact.unwrap_or(0);
            exec.rows(sql::ARTIFACT_ON_THREAD, &[thread(call), P::Int(id)])
                .await?;
        }
        // The document tools write on the guess that the thread is in direct mode (it is,
        // here), so their first statement carries the lock, as the server's do.
        Op::AppendToDocument => {
            let turn = lock(exec, call).await?;
            let text = format!(
                "\n- Note {} from client 0: keep the budget in view.",
                call.seq
            );
            let chars = text.chars().count() as i64;
            exec.rows(
                sql::APPEND_DOCUMENT,
                &[thread(call), P::Text(text.clone()), now(), P::Int(chars)],
            )
            .await?;
            let delta = serde_json::json!([{ "append": text }]).to_string();
            log_panel(exec, call, turn, "document", false, delta).await?;
        }
        Op::UpdateDocument => {
            let turn = lock(exec, call).await?;
            let content = format!(
                "# Trip plan (rewrite {} by client 0)\n\n## Goals\n\nA calm week by the sea, \
                 trains only, under the budget.\n\n## Days\n\n1. Arrive and settle.\n2. Coast \
                 walk.\n3. Museum and old town.\n4. Boat trip if the weather holds.\n5. Rest.\n",
                call.seq
            );
            let params = [
                thread(call),
                P::Text("Trip plan".into()),
                P::Text(content.clone()),
                now(),
                P::Int(content.chars().count() as i64),
            ];
            // On PostgreSQL the server replaces an existing body in the statement that reads
            // it; with no document yet it upserts. SQLite reads the body, then upserts.
            let replaced =
                exec.postgres() && !exec.rows(sql::REPLACE_DOCUMENT, &params).await?.is_empty();
            if !replaced {
                if !exec.postgres() {
                    exec.rows(sql::DOCUMENT_BEFORE, &[thread(call)]).await?;
                }
                exec.rows(sql::SET_DOCUMENT, &params).await?;
            }
            let state = serde_json::json!({ "title": "Trip plan", "content": content }).to_string();
            log_panel(exec, call, turn, "document", true, state).await?;
        }
        Op::SetObjective => {
            let turn = lock(exec, call).await?;
            let objective = format!("Plan a calm week by the sea (revision {})", call.seq);
            exec.rows(
                sql::SET_OBJECTIVE,
                &[thread(call), P::Text(objective.clone()), now()],
            )
            .await?;
            let state = serde_json::json!(objective).to_string();
            log_panel(exec, call, turn, "objective", true, state).await?;
        }
        Op::AddTodos | Op::RemoveTodos => {
            let turn = lock(exec, call).await?;
            // As `haico-load`'s generator: past the cap an add becomes a removal, and an add
            // nests under the first step now and then.
            let remove = call.op == Op::RemoveTodos || call.todos > MAX_TODOS;
            let nested = !remove && call.todos >= 6 && call.rng.u8(..4) == 0;
            if !remove && !nested && exec.postgres() {
                // At the end, the server reads the plan's end and inserts in one statement.
                let steps = appended_steps(call);
                let len = exec
                    .rows(
                        sql::APPEND_STEPS,
                        &[thread(call), now(), P::Text(steps.to_string())],
                    )
                    .await?
                    .first()
                    .map_or(0, |row| row[0]);
                let ops = serde_json::json!([{ "insert": len, "steps": steps }]).to_string();
                log_panel(exec, call, turn, "plan", false, ops).await?;
                learned.todos = Some(len + 3);
                return Ok(learned);
            }
            if remove {
                // The server resolves every target's run of sub-steps with the plan's length in
                // one statement, then deletes the runs.
                let n = if call.todos > MAX_TODOS { 6 } else { 1 };
                let mut targets = positions(&mut call.rng, call.todos.max(1), n);
                targets.sort_unstable();
                let json = serde_json::json!(targets).to_string();
                let limit = targets.last().map_or(0, |last| last + 1);
                let runs = exec
                    .rows(
                        pick(exec, sql::RUNS_AT),
                        &[thread(call), P::Text(json), P::Int(limit)],
                    )
                    .await?;
                // Each found target's key range: its key up to the next step that is not
                // deeper (no row names a target past the end: its key reads as 0).
                let mut found: Vec<(i64, i64)> = runs
                    .iter()
                    .filter(|row| row[0] > 0)
                    .map(|row| (row[0], if row[1] > row[0] { row[1] } else { i64::MAX }))
                    .collect();
                found.sort_unstable();
                let mut ranges: Vec<(i64, i64)> = Vec::new();
                for (key, end) in found {
                    if ranges.last().is_some_and(|(_, last_end)| key < *last_end) {
                        continue;
                    }
                    ranges.push((key, end));
                }
                for (start, end) in &ranges {
                    exec.rows(
                        sql::DELETE_STEPS,
                        &[thread(call), P::Int(*start), P::Int(*end)],
                    )
                    .await?;
                }
                let ops = serde_json::json!([{ "remove": ranges }]).to_string();
                log_panel(exec, call, turn, "plan", false, ops).await?;
                learned.todos = Some((call.todos - ranges.len() as i64).max(0));
            } else {
                let (len, at, previous, steps) = if nested {
                    // Under a parent: after its last sub-step, before the next step that is
                    // not deeper; the server finds both with the plan's length in one
                    // statement.
                    let parent = call.rng.i64(0..3);
                    let row = exec
                        .rows(
                            sql::NESTING_PLACE,
                            &[thread(call), P::Int(parent), P::Int(i64::MAX)],
                        )
                        .await?
                        .first()
                        .copied()
                        .unwrap_or([0, 0]);
                    let (end, previous) = (row[0], row[1]);
                    let at = if end > previous { end } else { i64::MAX };
                    let steps = serde_json::json!([
                        { "text": format!("Detail {}", call.seq), "depth": 1 }
                    ]);
                    (call.todos, at, previous, steps)
                } else {
                    // At the end on SQLite: the length and the last key, then the insert.
                    let (len, last_key) = plan_tail(exec, call).await?;
                    (len, i64::MAX, last_key.unwrap_or(0), appended_steps(call))
                };
                let count = steps.as_array().map_or(0, Vec::len) as i64;
                // Keys spread over the gap (appended steps leave 2^32 between them).
                let gap = if at == i64::MAX {
                    1 << 32
                } else {
                    ((at - previous) / (count + 1)).max(1)
                };
                exec.rows(
                    pick(exec, sql::INSERT_STEPS),
                    &[
                        thread(call),
                        P::Int(previous.saturating_add(gap)),
                        P::Int(gap),
                        now(),
                        P::Text(steps.to_string()),
                    ],
                )
                .await?;
                let ops = serde_json::json!([{ "insert": len, "steps": steps }]).to_string();
                log_panel(exec, call, turn, "plan", false, ops).await?;
                learned.todos = Some(len + count);
            }
        }
        Op::ToggleTodos | Op::UpdateTodos => {
            let turn = lock(exec, call).await?;
            let toggle = call.op == Op::ToggleTodos;
            // The client picks indices from the plan it last saw (up to `MAX_TODOS` steps);
            // the statement ranks, changes and counts in one go.
            let mut targets = positions(&mut call.rng, MAX_TODOS, if toggle { 3 } else { 2 });
            targets.sort_unstable();
            let rank_to = targets.last().map_or(0, |last| last + 1);
            let (sql, json) = if toggle {
                (pick(exec, sql::TOGGLE_STEPS), serde_json::json!(targets))
            } else {
                let text = format!("Revised step {}", call.seq);
                let pairs: Vec<_> = targets
                    .iter()
                    .map(|at| serde_json::json!([at, text]))
                    .collect();
                (pick(exec, sql::REWRITE_STEPS), serde_json::json!(pairs))
            };
            let rows = exec
                .rows(
                    sql,
                    &[
                        thread(call),
                        P::Text(json.to_string()),
                        P::Int(rank_to),
                        now(),
                    ],
                )
                .await?;
            if rows.is_empty() {
                plan_len(exec, call).await?;
            }
            let ops = serde_json::json!([{ "at": targets }]).to_string();
            log_panel(exec, call, turn, "plan", false, ops).await?;
        }
        Op::AddPreferences | Op::UpdatePreferences | Op::RemovePreferences => {
            let turn = lock(exec, call).await?;
            let op = if call.op == Op::AddPreferences && call.preferences > MAX_PREFERENCES {
                Op::RemovePreferences
            } else {
                call.op
            };
            let mut held = call.preferences;
            if op == Op::AddPreferences {
                exec.rows(
                    sql::INSERT_PREFERENCE,
                    &[
                        thread(call),
                        P::Text(format!("Prefer option {}", call.seq)),
                        P::Text("said in passing".into()),
                        P::Text(if call.rng.bool() { "soft" } else { "hard" }.into()),
                        now(),
                    ],
                )
                .await?;
                held += 1;
            } else {
                let ids = exec.rows(sql::LIST_PREFERENCES, &[thread(call)]).await?;
                held = ids.len() as i64;
                let n = if op == Op::RemovePreferences && held > MAX_PREFERENCES {
                    5
                } else {
                    1
                };
                for index in positions(&mut call.rng, held, n) {
                    let id = ids.get(index as usize).map_or(0, |row| row[0]);
                    if op == Op::UpdatePreferences {
                        exec.rows(
                            sql::UPDATE_PREFERENCE,
                            &[
                                thread(call),
                                P::Int(id),
                                P::NullText,
                                P::Bool(true),
                                P::Text(format!("revised {}", call.seq)),
                                P::NullText,
                                P::NullBool,
                                now(),
                            ],
                        )
                        .await?;
                    } else {
                        exec.rows(sql::DELETE_PREFERENCE, &[thread(call), P::Int(id)])
                            .await?;
                        held -= 1;
                    }
                }
            }
            learned.preferences = Some(held);
            let ops = serde_json::json!([{ "preferences": call.seq }]).to_string();
            log_panel(exec, call, turn, "preferences", false, ops).await?;
        }
        Op::ChartGenerator => {
            // The insert takes the turn from the thread's row, so it rides with the lock.
            let riding = exec.riding();
            let turn = lock(exec, call).await?;
            let payload = serde_json::json!({
                "chart_type": "bar",
                "title": format!("Costs {}", call.seq),
                "data": {"labels": ["Train", "Hotel", "Food"],
                         "series": [{"name": "EUR", "values": [120, 640, 210]}]},
                "y_axis_title": "EUR",
                "svg": "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 400\">…</svg>",
            })
            .to_string();
            let id = exec
                .rows(
                    sql::INSERT_ARTIFACT,
                    &[
                        thread(call),
                        P::Text("bar_chart".into()),
                        P::Text(format!("Costs {}", call.seq)),
                        P::Text(payload.clone()),
                        if riding { P::NullInt } else { P::Int(turn) },
                        now(),
                    ],
                )
                .await?
                .first()
                .map_or(0, |row| row[0]);
            let events = serde_json::json!([
                { "event": "artifact", "data": payload },
                { "event": "workspace", "data": r#"{"panels":["artifacts"],"source":"agent"}"# },
            ])
            .to_string();
            log_change(exec, call, turn, "artifacts", None, (events, 2), Some(id)).await?;
            learned.artifact = Some(id);
        }
    }
    Ok(learned)
}

/// The outline an add at the end of the plan sends.
fn appended_steps(call: &Call) -> serde_json::Value {
    serde_json::json!([
        { "text": format!("Book item {}", call.seq), "depth": 0 },
        { "text": "Compare prices", "depth": 1 },
        { "text": "Confirm by mail", "depth": 1 },
    ])
}

/// Creates the thread row, as `POST /api/threads` does.
pub async fn create_thread(exec: &mut impl Exec, id: &str) -> Result<()> {
    exec.rows(
        sql::INSERT_THREAD,
        &[
            P::Text(id.to_string()),
            P::Text(id.to_string()),
            P::Time(Utc::now()),
        ],
    )
    .await?;
    Ok(())
}
