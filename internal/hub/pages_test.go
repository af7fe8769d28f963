package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// history writes n messages of about 190 characters from alice into a
// conversation with her planner, so a page's words run out before its
// limit of 100 does, and returns the conversation.
func (w *world) history(t *testing.T, n int) string {
	t.Helper()
	conv := w.Direct(t, w.Planner, "alice")
	for i := 1; i <= n; i++ {
		if _, err := w.Hub.PostAsPerson(ctx, w.owner(t), conv, fmt.Sprintf("message %04d %s", i, strings.Repeat("x", 176)), ""); err != nil {
			t.Fatal(err)
		}
	}
	return conv
}

// walked checks that pages handed over seqs 1…n each once, in order,
// and that they were cut by size (under limit messages each).
func walked(t *testing.T, how string, seqs []int64, sizes []int, n int) {
	t.Helper()
	if len(seqs) != n {
		t.Fatalf("%s: %d messages in %d pages, want %d", how, len(seqs), len(sizes), n)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("%s: message %d is seq %d, want %d (pages of %v)", how, i, s, i+1, sizes)
		}
	}
	for _, size := range sizes[:len(sizes)-1] {
		if size >= hub.MessagesPage.Max || size == 0 {
			t.Fatalf("%s: pages of %v; want each cut by size, under %d", how, sizes, hub.MessagesPage.Max)
		}
	}
}

// TestPagesContinueWhereTheyStop: a page cut by its size says where the
// next one starts, so walking older pages from the latest one, newer pages
// from the start, or read_messages' pages hands over each message once.
func TestPagesContinueWhereTheyStop(t *testing.T) {
	w := newWorld(t)
	const n = 1000
	conv := w.history(t, n)
	alice := w.owner(t)

	// Older, from the latest page: each page ends just before the one
	// after it begins.
	_, res, err := w.Hub.PersonRecent(ctx, alice, conv, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasMore || res.NextAfterSeq != n || !res.HasOlder {
		t.Fatalf("the latest page: next %d, has_more %v, has_older %v; want it to end at %d with older ones before it", res.NextAfterSeq, res.HasMore, res.HasOlder, n)
	}
	var seqs []int64
	var sizes []int
	for {
		page := make([]int64, 0, len(res.Messages))
		for _, m := range res.Messages {
			page = append(page, m.Seq)
		}
		seqs, sizes = append(page, seqs...), append([]int{len(page)}, sizes...)
		if len(page) > 0 && res.BeforeSeq != page[0] {
			t.Fatalf("a page starting at %d says it starts at %d", page[0], res.BeforeSeq)
		}
		if !res.HasOlder {
			break
		}
		if len(sizes) > n {
			t.Fatal("older pages never end")
		}
		before := res.BeforeSeq
		if _, res, err = w.Hub.PersonMessagesBefore(ctx, alice, conv, before, 0); err != nil {
			t.Fatal(err)
		}
		if !res.HasMore || res.NextAfterSeq != before-1 {
			t.Fatalf("the page before %d: next %d, has_more %v; want it to end at %d with newer ones after it", before, res.NextAfterSeq, res.HasMore, before-1)
		}
	}
	// The first page is the last one walked; sizes lists it first.
	sizes = append(sizes[1:], sizes[0])
	walked(t, "older pages", seqs, sizes, n)

	// Newer, from the start, as a person and as an agent (read_messages).
	for _, who := range []string{"person", "agent"} {
		seqs, sizes = nil, nil
		var after int64
		for more := true; more; {
			var res *hub.ReadResult
			if who == "person" {
				_, res, err = w.Hub.PersonMessages(ctx, alice, conv, after, 0)
			} else {
				res, err = w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv, AfterSeq: after})
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Messages {
				seqs = append(seqs, m.Seq)
			}
			sizes = append(sizes, len(res.Messages))
			if res.HasOlder != (after > 0) {
				t.Fatalf("%s: the page after %d has has_older %v", who, after, res.HasOlder)
			}
			after, more = res.NextAfterSeq, res.HasMore
			if len(sizes) > n {
				t.Fatal("newer pages never end")
			}
		}
		walked(t, who+"'s newer pages", seqs, sizes, n)
	}

	if _, _, err := w.Hub.PersonMessagesBefore(ctx, alice, conv, -1, 0); code(err) != "invalid_argument" {
		t.Fatalf("before_seq -1: %v", err)
	}
	// Before the first message there is nothing, and nothing older.
	if _, res, err := w.Hub.PersonMessagesBefore(ctx, alice, conv, 1, 0); err != nil || len(res.Messages) != 0 || res.HasOlder || !res.HasMore || res.NextAfterSeq != 0 {
		t.Fatalf("the page before seq 1: %+v, %v", res, err)
	}
}
