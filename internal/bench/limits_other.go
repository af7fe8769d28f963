//go:build !unix

package bench

// raiseOpenFiles is a no-op where there is no RLIMIT_NOFILE; 0: unknown.
func raiseOpenFiles() uint64 { return 0 }
