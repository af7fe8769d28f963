-- ListTasks (DESIGN.md §18) pages a caller's A2A tasks with one agent,
-- newest first.
CREATE INDEX a2a_tasks_caller ON a2a_tasks (caller_id, agent_id, created_at, message_id);
