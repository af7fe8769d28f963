package hub

// NewTokenForTest returns a well-formed agent token that was never minted.
func NewTokenForTest() string { return newTokenSecret(AgentTokenPrefix) }
