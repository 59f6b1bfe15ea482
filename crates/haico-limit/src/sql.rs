//! The statements haico issues for the mixed workload's tool calls, as the server sends them
//! (taken from its sqlx statement log: `RUST_LOG=sqlx::query=debug haico serve`, one call of
//! each tool). Kept here verbatim so the limit runs exactly the product's SQL; when a store
//! query changes, the trace is taken again and this file follows (docs/PERFORMANCE.md §14
//! says how).
//!
//! Where the two engines differ, a pair `(sqlite, postgres)` is given. The first limit in
//! PERFORMANCE §14 was measured with the statements of `4cde23f` (dense plan positions that
//! shifted on every insert and removal); these are the statements after plans moved to sparse
//! keys.

/// The agent path opens every write by taking the thread row (its turn counter and document
/// mode); on PostgreSQL by marking the thread active, which its change log then leaves out.
pub const LOCK_THREAD: (&str, &str) = (
    "SELECT turn_index, document_mode FROM threads WHERE id = $1",
    "UPDATE threads SET updated_at = now() WHERE id = $1 RETURNING turn_index, document_mode",
);

/// The plan's length and its last step, for adding at the end.
pub const PLAN_TAIL: &str = "SELECT COUNT(*), MAX(sort_key), (SELECT depth FROM todos WHERE \
    thread_id = $1 ORDER BY sort_key DESC LIMIT 1) FROM todos WHERE thread_id = $1";

/// [`LOG_CHANGE_POSTGRES`]'s parameter types, as the server's `PREPARE haico_log_change(…)`
/// declares them.
pub const LOG_CHANGE_TYPES: &str = "(text, timestamptz, text, text, int8, int8, text, text, \
    text, text, int8, int8, text, bool, text, int8, int8, bool, bool, text, timestamptz)";

/// [`LOG_CHANGE_POSTGRES_STAMPING`]'s: the same and the artifacts.
pub const LOG_CHANGE_STAMPING_TYPES: &str = "(text, timestamptz, text, text, int8, int8, text, \
    text, text, text, int8, int8, text, bool, text, int8, int8, bool, bool, text, timestamptz, \
    text)";

/// A read opens the thread (does it exist, who owns it).
pub const READ_THREAD: &str = "SELECT id, title, turn_index, created_at, updated_at, \
    forked_from_thread, forked_from_rev, (SELECT name FROM users WHERE users.id = \
    threads.owner_id) AS owner FROM threads WHERE id = $1";

pub const INSERT_THREAD: &str = "INSERT INTO threads (id, title, turn_index, created_at, \
    updated_at) VALUES ($1, $2, 0, $3, $3) ON CONFLICT (id) DO NOTHING";

pub const APPEND_DOCUMENT: &str = "INSERT INTO documents (thread_id, title, content, version, \
    updated_at, chars) VALUES ($1, '', $2, 1, $3, $4) ON CONFLICT (thread_id) DO UPDATE SET \
    content = documents.content || excluded.content, chars = documents.chars + excluded.chars, \
    version = documents.version + 1, updated_at = excluded.updated_at RETURNING chars, version, \
    title";

/// `update_document` on SQLite reads the body it replaces first.
pub const DOCUMENT_BEFORE: &str = "SELECT content FROM documents WHERE thread_id = $1";

/// `update_document` on PostgreSQL: an existing body replaced in the statement that reads it
/// (the subquery locks the row first).
pub const REPLACE_DOCUMENT: &str = "UPDATE documents d SET content = $3, chars = $5, title = \
    COALESCE($2, d.title), version = d.version + 1, updated_at = $4 FROM (SELECT content FROM \
    documents WHERE thread_id = $1 FOR UPDATE) AS old WHERE d.thread_id = $1 RETURNING \
    old.content, d.title, d.version";

pub const SET_DOCUMENT: &str = "INSERT INTO documents (thread_id, title, content, version, \
    updated_at, chars) VALUES ($1, COALESCE($2, ''), $3, 1, $4, $5) ON CONFLICT (thread_id) DO \
    UPDATE SET content = excluded.content, chars = excluded.chars, title = COALESCE($2, \
    documents.title), version = documents.version + 1, updated_at = excluded.updated_at \
    RETURNING title, version";

pub const SET_OBJECTIVE: &str = "INSERT INTO objectives (thread_id, objective, updated_at) \
    VALUES ($1, $2, $3) ON CONFLICT (thread_id) DO UPDATE SET objective = excluded.objective, \
    updated_at = excluded.updated_at";

pub const PLAN_LEN: &str = "SELECT COUNT(*) FROM todos WHERE thread_id = $1";

/// Where steps nested under the step at 0-based `$2` go (`$3` is `i64::MAX`): the server's
/// `PlanRepo::nesting_place`, its answer's columns reordered so the two the limit reads come
/// first (the end of the parent's run, the key of its last step).
pub const NESTING_PLACE: &str = "WITH plan AS (SELECT COUNT(*) AS len FROM todos WHERE \
    thread_id = $1), parent AS ( SELECT id, sort_key, depth, text, done FROM todos WHERE \
    thread_id = $1 ORDER BY sort_key LIMIT 1 OFFSET $2), run AS ( SELECT parent.sort_key AS \
    start_key, (SELECT MIN(t.sort_key) FROM todos t WHERE t.thread_id = $1 AND t.sort_key > \
    parent.sort_key AND t.depth <= parent.depth) AS end_key FROM parent) SELECT run.end_key, \
    (SELECT MAX(t.sort_key) FROM todos t WHERE t.thread_id = $1 AND t.sort_key < \
    COALESCE(run.end_key, $3)) AS last_key, plan.len, parent.id, parent.sort_key, parent.depth, \
    parent.text, parent.done, (SELECT COUNT(*) FROM todos t WHERE t.thread_id = $1 AND \
    t.sort_key >= run.start_key AND t.sort_key < COALESCE(run.end_key, $3)) AS size FROM plan \
    LEFT JOIN parent ON TRUE LEFT JOIN run ON TRUE";

/// Every target's run of sub-steps with the plan's length (`$2` the 0-based positions as JSON,
/// `$3` how far to rank): the server's `PlanRepo::runs_at`, the key and the run's end first.
pub const RUNS_AT: (&str, &str) = (
    "WITH plan AS (SELECT sort_key, depth, text, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS \
     rank FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), hit AS (SELECT * FROM \
     plan WHERE rank IN (SELECT value FROM json_each($2))) SELECT hit.sort_key, (SELECT \
     MIN(t.sort_key) FROM todos t WHERE t.thread_id = $1 AND t.sort_key > hit.sort_key AND \
     t.depth <= hit.depth) AS end_key, (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS len, \
     hit.rank, hit.text FROM (SELECT 1 AS one) AS one LEFT JOIN hit ON TRUE",
    "WITH plan AS (SELECT sort_key, depth, text, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS \
     rank FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), hit AS (SELECT * FROM \
     plan WHERE rank = ANY (ARRAY(SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb)))) \
     SELECT hit.sort_key, (SELECT MIN(t.sort_key) FROM todos t WHERE t.thread_id = $1 AND \
     t.sort_key > hit.sort_key AND t.depth <= hit.depth) AS end_key, (SELECT COUNT(*) FROM todos \
     WHERE thread_id = $1) AS len, hit.rank, hit.text FROM (SELECT 1 AS one) AS one LEFT JOIN hit \
     ON TRUE",
);

pub const INSERT_STEPS: (&str, &str) = (
    "INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) SELECT \
     $1, $2 + $3 * CAST(j.key AS INTEGER), json_extract(j.value, '$.text'), json_extract(j.value, \
     '$.depth'), FALSE, $4, $4 FROM json_each($5) AS j RETURNING sort_key, id, text, depth, done",
    "INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) SELECT \
     $1, $2 + $3 * (s.ord - 1), s.step->>'text', (s.step->>'depth')::bigint, FALSE, $4, $4 FROM \
     jsonb_array_elements($5::jsonb) WITH ORDINALITY AS s(step, ord) RETURNING sort_key, id, \
     text, depth, done",
);

/// Steps appended at the end on PostgreSQL: the plan's length, its last key and the insert in
/// one statement (`$2` now, `$3` the steps as JSON); the server's gap between appended keys
/// and its ceiling for the last key (`KEY_GAP`, `i64::MAX / 4` less three gaps) are inlined.
pub const APPEND_STEPS: &str = "WITH tail AS ( SELECT COUNT(*) AS len, COALESCE(MAX(sort_key), \
    0) AS last FROM todos WHERE thread_id = $1), added AS ( INSERT INTO todos (thread_id, \
    sort_key, text, depth, done, created_at, updated_at) SELECT $1, tail.last + 4294967296 * \
    s.ord, s.step->>'text', (s.step->>'depth')::bigint, FALSE, $2, $2 FROM tail, \
    jsonb_array_elements($3::jsonb) WITH ORDINALITY AS s(step, ord) WHERE tail.last <= \
    2305842996328792063 RETURNING sort_key, id, text, depth, done) SELECT tail.len, added.* FROM \
    tail LEFT JOIN added ON TRUE";

/// Ticks every target in one statement that also counts the plan (`$2` the 0-based
/// positions as JSON, `$3` how far to rank, `$4` now).
pub const TOGGLE_STEPS: (&str, &str) = (
    "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank FROM todos \
     WHERE thread_id = $1 ORDER BY sort_key LIMIT $3) UPDATE todos SET done = NOT done, \
     updated_at = $4 WHERE id IN (SELECT id FROM plan WHERE rank IN (SELECT value FROM \
     json_each($2))) RETURNING sort_key, id, text, depth, done, (SELECT COUNT(*) FROM todos \
     WHERE thread_id = $1) AS plan_len",
    "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank FROM todos \
     WHERE thread_id = $1 ORDER BY sort_key LIMIT $3) UPDATE todos SET done = NOT done, \
     updated_at = $4 FROM plan WHERE todos.id = plan.id AND plan.rank = ANY (ARRAY(SELECT \
     value::bigint FROM jsonb_array_elements_text($2::jsonb))) RETURNING todos.sort_key, \
     todos.id, todos.text, todos.depth, todos.done, (SELECT COUNT(*) FROM todos WHERE \
     thread_id = $1) AS plan_len",
);

/// Rewrites every target in one statement that also counts the plan (`$2` the
/// `[position, text]` pairs as JSON, `$3` how far to rank, `$4` now).
pub const REWRITE_STEPS: (&str, &str) = (
    "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank FROM todos \
     WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), hit AS (SELECT plan.id, \
     json_extract(u.value, '$[1]') AS text FROM plan JOIN json_each($2) AS u ON plan.rank = \
     json_extract(u.value, '$[0]')) UPDATE todos SET text = hit.text, updated_at = $4 FROM hit \
     WHERE todos.id = hit.id RETURNING sort_key, id, text, depth, done, (SELECT COUNT(*) FROM \
     todos WHERE thread_id = $1) AS plan_len",
    "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank FROM todos \
     WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), hit AS (SELECT plan.id, u.e->>1 AS text \
     FROM plan JOIN jsonb_array_elements($2::jsonb) AS u(e) ON plan.rank = (u.e->>0)::bigint) \
     UPDATE todos SET text = hit.text, updated_at = $4 FROM hit WHERE todos.id = hit.id \
     RETURNING todos.sort_key, todos.id, todos.text, todos.depth, todos.done, (SELECT COUNT(*) \
     FROM todos WHERE thread_id = $1) AS plan_len",
);

pub const DELETE_STEPS: &str = "DELETE FROM todos WHERE thread_id = $1 AND sort_key >= $2 AND \
    sort_key < $3 RETURNING id";

/// The whole plan as one JSON row.
pub const LIST_STEPS: (&str, &str) = (
    "SELECT json_group_array(json_array(id, text, depth, done) ORDER BY sort_key) FROM todos \
     WHERE thread_id = $1",
    "SELECT COALESCE(json_agg(json_build_array(id, text, depth, CASE WHEN done THEN 1 ELSE 0 \
     END) ORDER BY sort_key)::text, '[]') FROM todos WHERE thread_id = $1",
);

pub const INSERT_PREFERENCE: &str = "INSERT INTO preferences (thread_id, title, subtitle, kind, \
    locked, created_at, updated_at) VALUES ($1, $2, $3, $4, FALSE, $5, $5) RETURNING id, title, \
    subtitle, kind, locked, created_at";

pub const LIST_PREFERENCES: &str = "SELECT id, title, subtitle, kind, locked, created_at FROM \
    preferences WHERE thread_id = $1 ORDER BY id";

pub const UPDATE_PREFERENCE: &str = "UPDATE preferences SET title = COALESCE($3, title), \
    subtitle = CASE WHEN $4 THEN $5 ELSE subtitle END, kind = COALESCE($6, kind), locked = \
    COALESCE($7, locked), updated_at = $8 WHERE thread_id = $1 AND id = $2 AND locked = FALSE \
    RETURNING id, title, subtitle, kind, locked, created_at";

pub const DELETE_PREFERENCE: &str =
    "DELETE FROM preferences WHERE thread_id = $1 AND id = $2 AND locked = FALSE";

/// The artifact's turn is the thread's, read in the same statement (`$5` is `NULL`) when the
/// insert rides with the thread's lock.
pub const INSERT_ARTIFACT: &str = "INSERT INTO artifacts (thread_id, artifact_type, title, \
    payload, turn_index, created_at) SELECT $1, $2, $3, $4, COALESCE($5, t.turn_index), $6 FROM \
    threads t WHERE t.id = $1 RETURNING id, turn_index";

/// The read-only tools check the thread in their panel's statement (`threads LEFT JOIN` the
/// panel), one round trip where [`READ_THREAD`] and the panel's read were two. The plan's
/// version is PostgreSQL's; on SQLite the server reads the thread, then [`LIST_STEPS`].
pub const PLAN_ON_THREAD: &str = "SELECT t.turn_index, COALESCE((SELECT \
    json_agg(json_build_array(id, text, depth, CASE WHEN done THEN 1 ELSE 0 END) ORDER BY \
    sort_key)::text FROM todos WHERE thread_id = $1), '[]') FROM threads t WHERE t.id = $1";

pub const PREFERENCES_ON_THREAD: &str = "SELECT t.turn_index AS thread_turn, p.id IS NOT NULL \
    AS found, p.* FROM threads t LEFT JOIN (SELECT id, title, subtitle, kind, locked FROM \
    preferences WHERE thread_id = $1) p ON TRUE WHERE t.id = $1 ORDER BY p.id";

pub const ARTIFACTS_ON_THREAD: &str = "SELECT t.turn_index AS thread_turn, a.id IS NOT NULL AS \
    found, a.* FROM threads t LEFT JOIN ( SELECT id, artifact_type, title, turn_index, \
    created_at FROM artifacts WHERE thread_id = $1 AND ($2 IS NULL OR artifact_type = $2) ORDER \
    BY id DESC LIMIT $3) a ON TRUE WHERE t.id = $1 ORDER BY a.id DESC";

pub const ARTIFACT_ON_THREAD: &str = "SELECT t.turn_index AS thread_turn, a.id IS NOT NULL AS \
    found, a.* FROM threads t LEFT JOIN ( SELECT id, artifact_type, title, turn_index, \
    created_at, payload FROM artifacts WHERE thread_id = $1 AND id = $2) a ON TRUE WHERE t.id = \
    $1";

/// The change's log (counter, revision, first panel record, events, thread touch, the stored
/// artifacts' revision tag), as up to six statements sent in one batch on SQLite. `$1` thread,
/// `$2` revision time, `$3`–`$12` the revision's columns, `$13`–`$16` the panel record, `$17`
/// event count, `$18` has a revision, `$19` touch, `$20` events (JSON), `$21` now, `$22` the
/// artifacts (JSON array, or `NULL`).
pub const LOG_CHANGE_SQLITE: [&str; 6] = [
    "INSERT INTO event_seqs (thread_id, last_seq, last_rev) VALUES ($1, $17, CASE WHEN $18 THEN \
     1 ELSE 0 END) ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $17, \
     last_rev = event_seqs.last_rev + CASE WHEN $18 THEN 1 ELSE 0 END RETURNING last_seq AS a, \
     last_rev AS b, NULL AS c, NULL AS d",
    "INSERT INTO revisions (thread_id, rev, at, source, by_name, turn_index, thread_turn, tool, \
     action_and_reasoning, panels, summary, restored_from, reverted_turn) SELECT $1, last_rev, \
     $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM event_seqs WHERE thread_id = $1 AND $18",
    "INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, \
     base_bytes) SELECT $1, $13, s.last_rev, $14, $15, CASE WHEN $14 THEN 0 ELSE \
     COALESCE(p.chain_len, 0) + 1 END, CASE WHEN $14 THEN 0 ELSE COALESCE(p.chain_bytes, 0) + \
     $16 END, CASE WHEN $14 THEN $16 ELSE COALESCE(p.base_bytes, 0) END FROM event_seqs s LEFT \
     JOIN ( SELECT chain_len, chain_bytes, base_bytes FROM panel_changes WHERE thread_id = $1 \
     AND panel = $13 ORDER BY rev DESC LIMIT 1) AS p ON TRUE WHERE s.thread_id = $1 AND $18 AND \
     $13 IS NOT NULL RETURNING NULL AS a, chain_len AS b, chain_bytes AS c, base_bytes AS d",
    "INSERT INTO events (thread_id, seq, event, data, created_at) SELECT $1, s.last_seq - $17 + \
     1 + CAST(j.key AS INTEGER), json_extract(j.value, '$.event'), json_extract(j.value, \
     '$.data'), $21 FROM event_seqs s, json_each($20) AS j WHERE s.thread_id = $1",
    "UPDATE threads SET updated_at = $21 WHERE id = $1 AND $19",
    "UPDATE artifacts SET rev = (SELECT last_rev FROM event_seqs WHERE thread_id = $1) WHERE \
     thread_id = $1 AND $18 AND id IN (SELECT value FROM json_each($22))",
];

/// The change log's CTEs, shared by [`LOG_CHANGE_POSTGRES`] and
/// [`LOG_CHANGE_POSTGRES_STAMPING`].
macro_rules! log_change_ctes {
    () => {
        "WITH s AS ( INSERT INTO event_seqs (thread_id, last_seq, \
    last_rev) VALUES ($1, $17, CASE WHEN $18 THEN 1 ELSE 0 END) ON CONFLICT (thread_id) DO \
    UPDATE SET last_seq = event_seqs.last_seq + $17, last_rev = event_seqs.last_rev + CASE WHEN \
    $18 THEN 1 ELSE 0 END RETURNING last_seq, last_rev), r AS ( INSERT INTO revisions \
    (thread_id, rev, at, source, by_name, turn_index, thread_turn, tool, action_and_reasoning, \
    panels, summary, restored_from, reverted_turn) SELECT $1, s.last_rev, $2, $3, $4, $5, $6, \
    $7, $8, $9, $10, $11, $12 FROM s WHERE $18 RETURNING rev), p AS ( INSERT INTO panel_changes \
    (thread_id, panel, rev, whole, data, chain_len, chain_bytes, base_bytes) SELECT $1, \
    $13::text, r.rev, $14, $15, CASE WHEN $14 THEN 0 ELSE COALESCE(prev.chain_len, 0) + 1 END, \
    CASE WHEN $14 THEN 0 ELSE COALESCE(prev.chain_bytes, 0) + $16 END, CASE WHEN $14 THEN $16 \
    ELSE COALESCE(prev.base_bytes, 0) END FROM r LEFT JOIN ( SELECT chain_len, chain_bytes, \
    base_bytes FROM panel_changes WHERE thread_id = $1 AND panel = $13::text ORDER BY rev DESC \
    LIMIT 1) AS prev ON TRUE WHERE $13::text IS NOT NULL RETURNING chain_len, chain_bytes, \
    base_bytes), e AS ( INSERT INTO events (thread_id, seq, event, data, created_at) SELECT $1, \
    s.last_seq - $17 + x.ord, x.item->>'event', x.item->>'data', $21 FROM s, \
    jsonb_array_elements($20::jsonb) WITH ORDINALITY AS x(item, ord))"
    };
}

/// The change log's answer: the counters, and the first record's chain.
macro_rules! log_change_answer {
    () => {
        " SELECT s.last_seq AS a, s.last_rev AS b, p.chain_len AS c, p.chain_bytes AS d, \
         p.base_bytes AS e FROM s LEFT JOIN p ON TRUE"
    };
}

/// See [`LOG_CHANGE_SQLITE`]: the same work as one statement of data-modifying CTEs.
pub const LOG_CHANGE_POSTGRES: &str = concat!(log_change_ctes!(), log_change_answer!());

/// [`LOG_CHANGE_POSTGRES`] for a change that stored artifacts: they are tagged with the
/// revision (`$22`, a JSON array), as the server's `haico_log_change_stamping` does.
pub const LOG_CHANGE_POSTGRES_STAMPING: &str = concat!(
    log_change_ctes!(),
    ", a AS ( UPDATE artifacts SET rev = r.rev FROM r WHERE artifacts.thread_id = $1 AND \
     artifacts.id IN (SELECT CAST(x AS int8) FROM jsonb_array_elements_text($22::jsonb) AS x))",
    log_change_answer!(),
);

/// The product sends the SQLite log as one batch: the same statements, joined; the artifacts'
/// tag only when the change stored one.
pub fn log_change_sqlite_batch(artifacts: bool) -> String {
    let count = if artifacts { 6 } else { 5 };
    LOG_CHANGE_SQLITE[..count].join("; ")
}
