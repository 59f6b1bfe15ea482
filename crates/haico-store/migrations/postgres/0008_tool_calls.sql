-- A turn's tool calls were stored as "steps", the word the plan uses for its own entries. The
-- table and its position column take the name the code uses for them.
ALTER TABLE steps RENAME TO tool_calls;
ALTER TABLE tool_calls RENAME COLUMN step_index TO call_index;
DROP INDEX steps_by_turn;
CREATE INDEX tool_calls_by_turn ON tool_calls (thread_id, turn_index, call_index);
