package tasks

// State is state, the rule of an A2A task's state (§18).
var State = state
