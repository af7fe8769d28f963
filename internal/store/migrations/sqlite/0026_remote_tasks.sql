-- A remote A2A agent's task that asked for input (DESIGN.md §18, "Out"):
-- the next message of the conversation to that agent continues it, sent
-- with the task's id; a call is told of it when it is claimed, and the row
-- goes once an answer to that task came back in another state.
CREATE TABLE remote_tasks (
    agent_id        TEXT NOT NULL REFERENCES remote_agents(agent_id),
    conversation_id TEXT NOT NULL,
    task_id         TEXT NOT NULL,
    PRIMARY KEY (agent_id, conversation_id)
);

-- What a remote call's task last said while it worked (its state and
-- words), posted as a task event post: the next is posted only if it
-- says something else.
ALTER TABLE remote_calls ADD COLUMN task_status TEXT NOT NULL DEFAULT '';
