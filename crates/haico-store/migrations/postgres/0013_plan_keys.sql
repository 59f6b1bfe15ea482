-- Plan order by sparse keys. `position` was dense (0..n-1 per thread), so inserting or
-- removing a step early in a long plan rewrote every later row. `sort_key` only orders: steps
-- are spread 2^32 apart, a new step takes a key between its neighbours', and the 1-based index
-- the agent sees is the rank in key order (walked on the index). Existing plans keep their
-- order: the step at position p becomes key (p + 1) * 2^32.
ALTER TABLE todos RENAME COLUMN position TO sort_key;
DROP INDEX todos_by_position;
UPDATE todos SET sort_key = ranked.n * 4294967296
FROM (SELECT id, row_number() OVER (PARTITION BY thread_id ORDER BY sort_key, id) AS n FROM todos) AS ranked
WHERE todos.id = ranked.id;
CREATE INDEX todos_in_order ON todos (thread_id, sort_key);

