//go:build unix

package bench

import "syscall"

// raiseOpenFiles lifts this process's open-file limit to its hard limit
// (each parked wait holds a connection) and returns it; a server spawned
// afterwards inherits it. 0: unknown.
func raiseOpenFiles() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	if l.Cur < l.Max {
		raised := l
		raised.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			l = raised
		}
	}
	return uint64(l.Cur)
}
