package mcpserver

// WithoutLean sends every call through the SDK, for tests that compare the
// lean path with it.
func WithoutLean(s *Server) { s.noLean = true }

// WithBaseURL sets the public base URL, as --base-url does.
func WithBaseURL(u string) func(*Server) { return func(s *Server) { s.setBaseURL(u) } }

// OnBodyRead hands f each request body oneMessage reads, until the test
// ends; tests of one server at a time only.
func OnBodyRead(t interface{ Cleanup(func()) }, f func(body []byte)) {
	testHookBodyRead = f
	t.Cleanup(func() { testHookBodyRead = nil })
}
