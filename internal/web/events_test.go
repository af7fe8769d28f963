package web_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sse is an open event stream, read a line at a time.
type sse struct {
	lines  chan string
	cancel context.CancelFunc
}

func (b *browser) stream(t *testing.T, lastEventID string) *sse {
	t.Helper()
	return b.streamAt(t, "/events/stream", lastEventID)
}

// streamAt opens the event stream at path (with its query).
func (b *browser) streamAt(t *testing.T, path, lastEventID string) *sse {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(sctx, "GET", b.s.url+path, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("the stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sse{lines: make(chan string, 100), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(cancel)
	return s
}

// next is the next event's id and data, or fails after 10 s.
func (s *sse) next(t *testing.T) (id, data string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	event := ""
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && event != "":
				if event != "changed" {
					t.Fatalf("an event named %q", event)
				}
				return id, data
			}
		case <-deadline:
			t.Fatal("no event within 10s")
		}
	}
}

// TestEventStream: the dashboard hears the person's own events live — a
// contact request — and a browser that reconnects with Last-Event-ID gets
// what it missed, once. Without a sign-in there is no stream.
func TestEventStream(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	s.person(t, "bob")
	s.person(t, "carol")
	st := alice.stream(t, "")
	if line := <-st.lines; line != "retry: 5000" {
		t.Fatalf("the stream opens with %q", line)
	}
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	id, data := st.next(t)
	if data != "contact.request" || id == "" {
		t.Fatalf("heard %q (id %q), want contact.request", data, id)
	}
	st.cancel()
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "carol"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	again := alice.stream(t, id)
	<-again.lines // retry:
	id2, data := again.next(t)
	if data != "contact.request" || id2 == id {
		t.Fatalf("after reconnecting: %q (id %q), want carol's contact.request once", data, id2)
	}
	// Signing out ends the stream before anything more is told.
	if err := s.accounts.SignOut(ctx, alice.cookie("palaver")); err != nil {
		t.Fatal(err)
	}
	s.person(t, "dave")
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "dave"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	for line := range again.lines {
		if strings.HasPrefix(line, "data: ") {
			t.Fatalf("after signing out the stream told %q", line)
		}
	}
	resp, err := http.Get(s.url + "/events/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stream without a sign-in: %d", resp.StatusCode)
	}
}

// TestPartsLeaveTheFlash: a part of a page fetching itself on an event
// (an htmx request that is not a boosted navigation) does not take the
// notice meant for the page a form led to.
func TestPartsLeaveTheFlash(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	req := newPost(s.url+"/contacts", map[string][]string{"handle": {"nobody"}})
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	// The form's redirect is not followed yet: a part refresh comes first.
	alice.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	alice.do(req)
	alice.c.CheckRedirect = nil
	part, _ := http.NewRequest("GET", s.url+"/approvals", nil)
	part.Header.Set("HX-Request", "true")
	if p := alice.do(part); p.errorText() != "" {
		t.Fatalf("a part refresh showed the flash %q", p.errorText())
	}
	if p := alice.get("/contacts"); p.errorText() == "" {
		t.Fatal("the page the form led to lost its flash to a part refresh")
	}
}

// TestAPageHearsWhatCameAfterItWasDrawn: a page's event stream starts
// where the events stood when the page was read, so an event between the
// page's drawing and the browser opening its stream still reaches it.
func TestAPageHearsWhatCameAfterItWasDrawn(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	s.person(t, "bob")
	p := alice.get("/approvals")
	var at string
	for _, n := range findAll(p.doc, "div") {
		if v := attr(n, "sse-connect"); v != "" {
			at = v
		}
	}
	if !strings.HasPrefix(at, "/events/stream?cursor=") {
		t.Fatalf("the page's stream is %q, want one from a cursor", at)
	}
	if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
		t.Fatal(err)
	}
	st := alice.streamAt(t, at, "")
	<-st.lines // retry:
	if _, data := st.next(t); data != "contact.request" {
		t.Fatalf("the stream opened after bob's request heard %q, want contact.request", data)
	}
}
