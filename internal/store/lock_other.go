//go:build !unix

package store

// lockFile is a no-op where flock is not available.
func lockFile(path string) (func(), error) { return func() {}, nil }
