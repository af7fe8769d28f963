package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lines delivers what r carries, line by line, until it ends.
func lines(r io.Reader) <-chan string {
	c := make(chan string, 100)
	go func() {
		defer close(c)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			c <- sc.Text()
		}
	}()
	return c
}

// next is the next line from c that contains want, failing the test if
// none comes in 20 seconds; the lines before it are returned too.
func next(t *testing.T, c <-chan string, what, want string) (line string, skipped []string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-c:
			if !ok {
				t.Fatalf("%s ended before a line with %q; it said %q", what, want, skipped)
			}
			if strings.Contains(line, want) {
				return line, skipped
			}
			skipped = append(skipped, line)
		case <-deadline:
			t.Fatalf("no line with %q from %s in 20s; it said %q", want, what, skipped)
		}
	}
}

// first is the first line from c that contains want.
func first(t *testing.T, c <-chan string, want string) string {
	t.Helper()
	line, _ := next(t, c, "palaver wait", want)
	return line
}

// TestWaitAcrossRestart: palaver wait prints each timed-out wait's cursor,
// and outlives a restart of the server on the same address: it says on
// stderr that it is reconnecting and from which cursor, and goes on from
// it, so the next event is printed and nothing is repeated.
func TestWaitAcrossRestart(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "palaver.db")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url, _, stop := launchServer(t, nil, "--addr", addr, "--database", db)
	admin := adminOn(t, ctx, db)
	admin("user", "create", "alice")
	admin("agent", "create", "alice/planner")
	admin("agent", "create", "alice/reviewer")
	minted := strings.Split(strings.TrimSpace(admin("token", "mint", "--user", "alice", "--agent", "planner")), "\n")
	vars := map[string]string{"PALAVER_URL": url, "PALAVER_TOKEN": minted[len(minted)-1]}
	_, opened, _ := run(t, ctx, vars, "call", "open_conversation", `{"handles": ["alice/reviewer"]}`)
	var conv struct {
		ID string `json:"conversation_id"`
	}
	if json.Unmarshal([]byte(opened), &conv) != nil || conv.ID == "" {
		t.Fatalf("open_conversation: %s", opened)
	}

	wctx, cancel := context.WithCancel(ctx)
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(wctx, []string{"wait", "--timeout", "1"}, strings.NewReader(""), outW, errW, func(k string) string { return vars[k] })
		outW.Close()
		errW.Close()
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("palaver wait exited %d", code)
		}
	}()
	stdout, stderr := lines(outR), lines(errR)
	cursor := func(line string) string {
		t.Helper()
		var v struct {
			Cursor string `json:"cursor"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil || v.Cursor == "" {
			t.Fatalf("palaver wait printed %q, with no cursor", line)
		}
		return v.Cursor
	}
	// Only timed-out lines, each with the cursor to resume from, come
	// between events.
	onlyTimedOut := func(skipped []string, want string) {
		t.Helper()
		for _, line := range skipped {
			if line != `{"cursor":"`+want+`","timed_out":true}` {
				t.Errorf("palaver wait printed %q; want only timed-out lines with cursor %s between events", line, want)
			}
		}
	}

	started := cursor(first(t, stdout, `"timed_out":true`))
	admin("conversation", "post", conv.ID, "before the restart", "--user", "alice")
	line, skipped := next(t, stdout, "palaver wait", `"before the restart"`)
	onlyTimedOut(skipped, started)
	last := cursor(line)
	line, skipped = next(t, stdout, "palaver wait", `"timed_out":true`)
	onlyTimedOut(append(skipped, line), last)

	stop() // the server is gone
	lost, _ := next(t, stderr, "palaver wait's stderr", "palaver wait: lost the server")
	if want := "; reconnecting, to go on after cursor " + last; !strings.HasSuffix(lost, want) {
		t.Errorf("stderr said %q, want it to end %q", lost, want)
	}

	// The same address and database again; what is posted while the wait
	// reconnects is printed once it has, and nothing from before again.
	launchServer(t, nil, "--addr", addr, "--database", db)
	admin("conversation", "post", conv.ID, "after the restart", "--user", "alice")
	next(t, stderr, "palaver wait's stderr", "palaver wait: reconnected to "+url)
	_, skipped = next(t, stdout, "palaver wait", `"after the restart"`)
	onlyTimedOut(skipped, last)
}
