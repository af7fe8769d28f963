package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Floors are this machine's limits measured in the same run (§17): every
// speed figure of a report is also given as a ratio to its floor.
type Floors struct {
	FsyncPerSec    float64 `json:"fsync_per_s"`     // 4 KiB appends with fdatasync, in the data directory
	HTTPPerSec     float64 `json:"http_rtt_per_s"`  // raw net/http JSON round trips, 32 clients
	HTTPSequential Summary `json:"http_sequential"` // one client, one at a time
}

// measureFsync appends 4 KiB blocks to a file in dir, syncing each, for d.
func measureFsync(dir string, d time.Duration) (float64, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := make([]byte, 4096)
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := f.Write(block); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// measureHTTP runs a JSON echo server on loopback and drives it with the
// same kind of client the workloads use: sequentially, then 32 at once.
func measureHTTP(ctx context.Context, d time.Duration) (perSec float64, seq Summary, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, Summary{}, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"
	hc := newHTTPClient()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"body":"` + strings.Repeat("x", 200) + `"}}}`)
	one := func() error {
		resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	var lat latencies
	start := time.Now()
	for time.Since(start) < d/2 {
		t := time.Now()
		if err := one(); err != nil {
			return 0, Summary{}, err
		}
		lat = append(lat, time.Since(t))
	}
	var count atomic.Int64
	var wg sync.WaitGroup
	start = time.Now()
	for range 32 {
		wg.Go(func() {
			for time.Since(start) < d/2 && ctx.Err() == nil {
				if one() == nil {
					count.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(count.Load()) / time.Since(start).Seconds(), lat.summary(), nil
}

// proc reads a process's CPU time and resident memory from /proc (Linux).
type proc struct{ pid int }

// cpu is the process's user+system CPU time.
func (p proc) cpu() time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// rss is the process's resident memory in bytes.
func (p proc) rss() int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
