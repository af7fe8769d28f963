package mcpserver

// WithoutLean sends every call through the SDK, for tests that compare the
// lean path with it.
func WithoutLean(s *Server) { s.noLean = true }
