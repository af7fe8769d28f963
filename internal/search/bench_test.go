package search_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// BenchmarkSearch measures search_messages at 100,000 messages of history
// (§18): 1,000 conversations of 100 messages between alice's planner and
// reviewer, each body 10–40 words drawn from 5,000 with Zipf's law, so the
// commonest word is in about a quarter of the messages and a rare one in a
// few hundred. The history is written through the store, 1,000 messages a
// transaction; each sub-benchmark then runs one kind of query as the
// planner (who takes part in every conversation, the most a search can
// look through) or as alice (through her agents), and reports the p50 and
// p99 of a search as the hub answers it: parse, store, access check per
// conversation, snippets. PALAVER_TEST_STORE=postgres runs it on
// PostgreSQL, with the planner's statistics brought up to date after the
// fill, as autovacuum does.
func BenchmarkSearch(b *testing.B) {
	db, analyze := storetest.OpenAnalyzed(b)
	w := newWorldOn(b, db)
	fillHistory(b, w, 1000, 100)
	analyze()
	alice, err := w.Hub.User(ctx, "alice")
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, query string }{
		{"rare", "zebra"},
		{"common", benchWord(0)},
		{"two_words", benchWord(3) + " " + benchWord(40)},
		{"phrase", `"` + benchWord(0) + " " + benchWord(1) + `"`},
		{"or", benchWord(200) + " OR " + benchWord(300)},
		{"exclude", benchWord(2) + " -" + benchWord(0)},
		{"rare_person", "zebra"},
		{"common_person", benchWord(0)},
	} {
		b.Run(q.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				var res *search.Result
				var err error
				if strings.HasSuffix(q.name, "_person") {
					res, err = w.finder.PersonSearch(ctx, alice, search.Input{Query: q.query})
				} else {
					res, err = w.finder.Search(ctx, w.Planner, search.Input{Query: q.query})
				}
				took = append(took, time.Since(start))
				if err != nil || len(res.Hits) == 0 {
					b.Fatalf("%s: %+v, %v", q.query, res, err)
				}
			}
			slices.Sort(took)
			pct := func(p float64) float64 {
				return float64(took[min(int(p*float64(len(took))), len(took)-1)].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// benchWord is the vocabulary's word of rank i: three syllables of
// letters, so no two ranks give the same word and none is "zebra".
func benchWord(i int) string {
	const cons, vows = "bdfgklmnprstvz", "aeiou"
	var b strings.Builder
	for range 3 {
		s := i % (len(cons) * len(vows))
		b.WriteByte(cons[s/len(vows)])
		b.WriteByte(vows[s%len(vows)])
		i /= len(cons) * len(vows)
	}
	return b.String()
}

// fillHistory stores convs conversations of perConv sent messages each
// between the world's planner and reviewer, through the store, a thousand
// messages a transaction; one message in 200 has the word zebra.
func fillHistory(b *testing.B, w *world, convs, perConv int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(r, 1.1, 1, 4999)
	at := w.Clock.Now().Add(-time.Duration(convs*perConv) * time.Second)
	body := func(n int) string {
		words := make([]string, 10+r.IntN(31))
		for i := range words {
			words[i] = benchWord(int(zipf.Uint64()))
		}
		if n%200 == 0 {
			words[r.IntN(len(words))] = "zebra"
		}
		return strings.Join(words, " ")
	}
	start := time.Now()
	n := 0
	const batch = 1000
	for c := 0; c < convs; c += batch / perConv {
		err := w.Store.Update(ctx, func(tx hub.Tx) error {
			for k := c; k < min(c+batch/perConv, convs); k++ {
				conv := &hub.Conversation{ID: fmt.Sprintf("conv_bench%05d", k), Kind: hub.KindGroup, Title: "history", Status: hub.StatusOpen,
					CreatorID: w.Planner.Agent.ID, CreatedAt: at, UpdatedAt: at, LastSeq: int64(perConv)}
				if err := tx.InsertConversation(ctx, conv); err != nil {
					return err
				}
				for _, a := range []*hub.Caller{w.Planner, w.Reviewer} {
					if err := tx.AddParticipant(ctx, &hub.Participant{ConversationID: conv.ID, PrincipalID: a.Agent.ID, Kind: hub.PrincipalAgent,
						OwnerID: a.Agent.OwnerID, Role: hub.RoleMember, JoinedAt: at}); err != nil {
						return err
					}
				}
				for seq := 1; seq <= perConv; seq++ {
					n++
					at = at.Add(time.Second)
					sender := []*hub.Caller{w.Planner, w.Reviewer}[seq%2]
					m := &hub.Message{ID: fmt.Sprintf("msg_bench%07d", n), ConversationID: conv.ID, Seq: int64(seq), Status: hub.MessageSent,
						SenderID: sender.Agent.ID, SenderKind: hub.PrincipalAgent, SenderHandle: sender.Agent.Handle(),
						Body: body(n), Format: hub.FormatText, Kind: hub.MessageText, Author: hub.AuthorAgent, Authority: hub.AuthorityAgent,
						OwnerID: sender.Owner.ID, OwnerHandle: sender.Owner.Handle, CreatedAt: at}
					if err := tx.InsertMessage(ctx, m); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored %d messages in %d conversations in %s", n, convs, time.Since(start).Round(time.Millisecond))
}
