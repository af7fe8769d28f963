package bench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
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
	FsyncPerSec          float64 `json:"fsync_per_s"`           // 4 KiB appends with fdatasync, in the data directory
	Fsync                Summary `json:"fsync"`                 // each of those appends with its fdatasync
	HTTPPerSec           float64 `json:"http_rtt_per_s"`        // raw net/http JSON round trips, 32 clients
	HTTPSequentialPerSec float64 `json:"http_sequential_per_s"` // the same, one client, one at a time
	HTTPSequential       Summary `json:"http_sequential"`
	// Wake is raw net/http's wake-up: 16 pairs of a parked long poll and
	// a request that wakes it, from the waking request's start to the
	// long poll's answer.
	Wake Summary `json:"wake"`
}

// measureFsync appends 4 KiB blocks to a file in dir, syncing each, for d.
func measureFsync(dir string, d time.Duration) (float64, Summary, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return 0, Summary{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := make([]byte, 4096)
	var lat latencies
	start := time.Now()
	for time.Since(start) < d {
		t := time.Now()
		if _, err := f.Write(block); err != nil {
			return 0, Summary{}, err
		}
		if err := f.Sync(); err != nil {
			return 0, Summary{}, err
		}
		lat = append(lat, time.Since(t))
	}
	return float64(len(lat)) / time.Since(start).Seconds(), lat.summary(), nil
}

// measureWake parks one long poll per pair on a raw net/http server and
// wakes it with another request, over and over for d: the floor of a
// send's wake-up, without a store or a hub.
func measureWake(ctx context.Context, pairs int, d time.Duration) (Summary, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Summary{}, err
	}
	parked, wake := make([]chan struct{}, pairs), make([]chan struct{}, pairs)
	for i := range pairs {
		parked[i], wake[i] = make(chan struct{}, 1), make(chan struct{}, 1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.URL.Query().Get("pair"))
		if err != nil || i < 0 || i >= pairs {
			http.Error(w, "no such pair", http.StatusBadRequest)
			return
		}
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/wait" {
			parked[i] <- struct{}{}
			select {
			case <-wake[i]:
			case <-r.Context().Done():
				return
			}
		} else {
			wake[i] <- struct{}{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	var mu sync.Mutex
	var all latencies
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range pairs {
		wg.Go(func() {
			waiter, waker := newHTTPClient(), newHTTPClient()
			post := func(hc *http.Client, path string) error {
				resp, err := hc.Post(fmt.Sprintf("%s%s?pair=%d", base, path, i), "application/json", strings.NewReader("{}"))
				if err != nil {
					return err
				}
				io.Copy(io.Discard, resp.Body)
				return resp.Body.Close()
			}
			var lat latencies
			defer func() { mu.Lock(); all = append(all, lat...); mu.Unlock() }()
			for time.Since(start) < d && ctx.Err() == nil {
				answered := make(chan time.Time, 1)
				go func() {
					if err := post(waiter, "/wait"); err != nil {
						mu.Lock()
						firstErr = cmp.Or(firstErr, err)
						mu.Unlock()
					}
					answered <- time.Now()
				}()
				<-parked[i]
				t := time.Now()
				if err := post(waker, "/wake"); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
				lat = append(lat, (<-answered).Sub(t))
			}
		})
	}
	wg.Wait()
	return all.summary(), firstErr
}

// measureHTTP runs a JSON echo server on loopback and drives it with the
// same kind of client the workloads use: sequentially, then 32 at once.
func measureHTTP(ctx context.Context, d time.Duration) (perSec, seqPerSec float64, seq Summary, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, Summary{}, err
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
			return 0, 0, Summary{}, err
		}
		lat = append(lat, time.Since(t))
	}
	seqPerSec = float64(len(lat)) / time.Since(start).Seconds()
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
	return float64(count.Load()) / time.Since(start).Seconds(), seqPerSec, lat.summary(), nil
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
