-- Issue 26: which configured MCP servers a thread's agent may use. NULL (every existing
-- thread) means all of them; otherwise a JSON array of server names, possibly empty (none).
ALTER TABLE threads ADD COLUMN mcp_servers TEXT;
