-- What each turn cost in model tokens and waiting time (a JSON object: model_calls,
-- prompt_tokens, cached_tokens, completion_tokens, first_token_ms, model_ms, calls), written
-- when the turn ends; NULL for turns that ended before haico counted tokens.
ALTER TABLE turns ADD COLUMN usage TEXT;
