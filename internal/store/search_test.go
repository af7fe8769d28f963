package store_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// searchWorld stores conversations and messages for the search tests:
// conv_a (agt_a of usr_alice, usr_carol; in project proj_p), conv_b (agt_b
// of usr_bob), conv_gone (agt_a left it) and conv_shut (closed).
type searchWorld struct {
	t    *testing.T
	db   *store.DB
	next int
}

func newSearchWorld(t *testing.T, db *store.DB) *searchWorld {
	t.Helper()
	w := &searchWorld{t: t, db: db}
	at := time.UnixMilli(1_000_000).UTC()
	err := db.Update(ctx, func(tx hub.Tx) error {
		for _, c := range []struct {
			id, project, status string
			ps                  [][2]string // principal, owner
		}{
			{"conv_a", "proj_p", hub.StatusOpen, [][2]string{{"agt_a", "usr_alice"}, {"usr_carol", "usr_carol"}}},
			{"conv_b", "", hub.StatusOpen, [][2]string{{"agt_b", "usr_bob"}}},
			{"conv_gone", "", hub.StatusOpen, [][2]string{{"agt_a", "usr_alice"}, {"agt_b", "usr_bob"}}},
			{"conv_shut", "", hub.StatusClosed, [][2]string{{"agt_a", "usr_alice"}}},
		} {
			conv := &hub.Conversation{ID: c.id, Kind: hub.KindGroup, Status: c.status, ProjectID: c.project, CreatorID: c.ps[0][0], CreatedAt: at, UpdatedAt: at}
			if err := tx.InsertConversation(ctx, conv); err != nil {
				return err
			}
			for _, p := range c.ps {
				kind := hub.PrincipalAgent
				if p[0] == p[1] {
					kind = hub.PrincipalUser
				}
				if err := tx.AddParticipant(ctx, &hub.Participant{ConversationID: c.id, PrincipalID: p[0], Kind: kind, OwnerID: p[1], Role: hub.RoleMember, JoinedAt: at}); err != nil {
					return err
				}
			}
		}
		return tx.LeaveConversation(ctx, "conv_gone", "agt_a", at)
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// add stores a message in conv from sender with status and summary, n
// minutes after the first, and returns its id.
func (w *searchWorld) add(conv, sender, status, summary, body string) string {
	w.t.Helper()
	w.next++
	m := &hub.Message{ID: fmt.Sprintf("msg_%03d", w.next), ConversationID: conv, Status: status, SenderID: "agt_" + sender,
		SenderKind: hub.PrincipalAgent, SenderHandle: sender, Body: body, Summary: summary, Format: hub.FormatText, Kind: hub.MessageText,
		Author: hub.AuthorAgent, Authority: hub.AuthorityAgent, OwnerID: "usr_x", OwnerHandle: "x",
		CreatedAt: time.UnixMilli(1_000_000 + int64(w.next)*60_000).UTC()}
	if status == hub.MessageSent {
		m.Seq = int64(w.next)
	}
	if err := w.db.Update(ctx, func(tx hub.Tx) error { return tx.InsertMessage(ctx, m) }); err != nil {
		w.t.Fatal(err)
	}
	return m.ID
}

// search runs a query as f's reader and returns the ids found, in order.
func (w *searchWorld) search(f hub.SearchFilter, query string) []string {
	w.t.Helper()
	q, err := fulltext.Parse(query)
	if err != nil {
		w.t.Fatalf("%q: %v", query, err)
	}
	f.Query = q
	return w.run(f)
}

// run searches once everything stored so far is indexed.
func (w *searchWorld) run(f hub.SearchFilter) []string {
	w.t.Helper()
	indexed(w.t, w.db)
	msgs, err := w.db.SearchMessages(ctx, f, 50)
	if err != nil {
		w.t.Fatal(err)
	}
	ids := []string{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestSearchMatchesTheSameOnBothStores: the query language's words,
// phrases, OR and exclusions, words joined by punctuation, case and
// scripts, summaries, and ranking — with the same answers on each store.
// (Each store ranks by its own measure; the tests hold it to clear cases.)
func TestSearchMatchesTheSameOnBothStores(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		retry := w.add("conv_a", "alice/a", hub.MessageSent, "", "Please review the retry logic in store.go by Friday")
		deploy := w.add("conv_a", "alice/a", hub.MessageSent, "", "Deploy the release to staging, then to production")
		cafe := w.add("conv_a", "carol", hub.MessageSent, "", "Lunch at the café? 日本語 and ÜNÏCODE words work too")
		summary := w.add("conv_a", "alice/a", hub.MessageSent, "Retry budget for the deploy", "A long body about other things entirely")
		twice := w.add("conv_a", "alice/a", hub.MessageSent, "", "retry, retry and retry again: the retry storm")
		reader := hub.SearchFilter{ParticipantID: "agt_a"}

		for _, c := range []struct {
			query string
			want  []string
		}{
			{"retry", []string{retry, summary, twice}},
			{"RETRY logic", []string{retry}},
			{`"retry logic"`, []string{retry}},
			{`"logic retry"`, []string{}},
			{"store", []string{retry}},
			{"store.go", []string{retry}},
			{`"store go"`, []string{retry}},
			{"deploy OR lunch", []string{deploy, cafe, summary}},
			{"retry -storm", []string{retry, summary}},
			{`retry -"retry logic" -budget`, []string{twice}},
			{"café", []string{cafe}},
			{"cafe", []string{}}, // diacritics count, on both stores
			{"日本語", []string{cafe}},
			{"ünïcode", []string{cafe}},
			{"production staging release", []string{deploy}},
			{"missing", []string{}},
		} {
			got := w.search(reader, c.query)
			slices.Sort(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.query, diff)
			}
		}
		// Best first: a word in the summary, or said again and again,
		// before the same word said once in a longer body.
		if got := w.search(reader, "retry"); len(got) != 3 || got[2] != retry {
			t.Errorf("retry ranks %v; want %s last", got, retry)
		}
		if got := w.search(reader, "deploy"); !slices.Equal(got, []string{summary, deploy}) {
			t.Errorf("deploy ranks %v; want the summary's %s first", got, summary)
		}
	})
}

// TestSearchKeepsToTheReadersConversations: held and rejected messages,
// closed conversations and ones the reader left are never found; a person
// finds their agents' conversations; narrowing by conversation, project,
// sender and time.
func TestSearchKeepsToTheReadersConversations(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		mine := w.add("conv_a", "alice/a", hub.MessageSent, "", "the quarterly report is ready")
		carols := w.add("conv_a", "carol", hub.MessageSent, "", "thanks for the quarterly report")
		w.add("conv_a", "alice/a", hub.MessageHeld, "", "quarterly report, held")
		w.add("conv_a", "alice/a", hub.MessageRejected, "", "quarterly report, rejected")
		bobs := w.add("conv_b", "bob/b", hub.MessageSent, "", "bob's quarterly report")
		left := w.add("conv_gone", "bob/b", hub.MessageSent, "", "quarterly report where alice's agent left")
		w.add("conv_shut", "alice/a", hub.MessageSent, "", "quarterly report in a closed conversation")

		both := []string{mine, carols}
		for _, c := range []struct {
			name string
			f    hub.SearchFilter
			want []string
		}{
			{"agent", hub.SearchFilter{ParticipantID: "agt_a"}, both},
			{"its owner", hub.SearchFilter{OwnerID: "usr_alice"}, both},
			{"a person taking part", hub.SearchFilter{OwnerID: "usr_carol"}, both},
			{"another owner", hub.SearchFilter{OwnerID: "usr_bob"}, []string{bobs, left}},
			{"nobody", hub.SearchFilter{OwnerID: "usr_dave"}, []string{}},
			{"one conversation", hub.SearchFilter{ParticipantID: "agt_a", ConversationID: "conv_b"}, []string{}},
			{"its project", hub.SearchFilter{OwnerID: "usr_alice", ProjectID: "proj_p"}, both},
			{"another project", hub.SearchFilter{OwnerID: "usr_alice", ProjectID: "proj_q"}, []string{}},
			{"from a sender", hub.SearchFilter{OwnerID: "usr_alice", SenderHandle: "carol"}, []string{carols}},
			{"since", hub.SearchFilter{OwnerID: "usr_alice", Since: time.UnixMilli(1_000_000 + 2*60_000).UTC()}, []string{carols}},
		} {
			got := w.search(c.f, "quarterly report")
			slices.Sort(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
	})
}

// TestSearchIndexesApprovedWordsOnly: a held message is found once it is
// approved, by the words its owner left it with; a rejected one never.
func TestSearchIndexesApprovedWordsOnly(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		edited := w.add("conv_a", "alice/a", hub.MessageHeld, "", "the agent's draft about pineapples")
		rejected := w.add("conv_a", "alice/a", hub.MessageHeld, "", "another draft about pineapples")
		reader := hub.SearchFilter{ParticipantID: "agt_a"}
		if got := w.search(reader, "pineapples"); len(got) != 0 {
			t.Fatalf("held messages found: %v", got)
		}
		at := time.UnixMilli(2_000_000).UTC()
		err := db.Update(ctx, func(tx hub.Tx) error {
			if err := tx.DecideMessage(ctx, &hub.Message{ID: edited, Status: hub.MessageSent, Seq: 7, Body: "the owner's words about mangoes",
				OriginalBody: "the agent's draft about pineapples", Authority: hub.AuthorityEdited, DecidedBy: "usr_alice", DecidedAt: at}); err != nil {
				return err
			}
			return tx.DecideMessage(ctx, &hub.Message{ID: rejected, Status: hub.MessageRejected, Body: "another draft about pineapples",
				Authority: hub.AuthorityAgent, DecidedBy: "usr_alice", DecidedAt: at})
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{edited}, w.search(reader, "mangoes")); diff != "" {
			t.Errorf("the approved message by its final words (-want +got):\n%s", diff)
		}
		if got := w.search(reader, "pineapples"); len(got) != 0 {
			t.Errorf("found by words no longer its own, or rejected: %v", got)
		}
	})
}

// TestSearchQuotesEveryWord: a phrase's words reach each store quoted, so
// one holding the match syntax's own characters is words, not syntax.
func TestSearchQuotesEveryWord(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		w.add("conv_a", "alice/a", hub.MessageSent, "", "alpha beta")
		for _, p := range []fulltext.Phrase{{`gamma" OR "beta`}, {`gamma' | 'beta`}, {`gamma\' | 'beta`}, {"NEAR(gamma", "beta)"}, {"*"}} {
			f := hub.SearchFilter{ParticipantID: "agt_a", Query: &fulltext.Query{All: [][]fulltext.Phrase{{p}}}}
			if got := w.run(f); len(got) != 0 {
				t.Errorf("%q matched %v", p, got)
			}
		}
	})
}

// TestSearchOfManyConversations: a reader in more conversations than the
// index is told of by name finds the same, and a search that matches more
// than fulltext.Window messages ranks the newest of them.
func TestSearchOfManyConversations(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		at := time.UnixMilli(1_000_000).UTC()
		var want []string
		err := db.Update(ctx, func(tx hub.Tx) error {
			for i := range 60 {
				id := fmt.Sprintf("conv_many%02d", i)
				if err := tx.InsertConversation(ctx, &hub.Conversation{ID: id, Kind: hub.KindGroup, Status: hub.StatusOpen, CreatorID: "agt_m", CreatedAt: at, UpdatedAt: at}); err != nil {
					return err
				}
				if err := tx.AddParticipant(ctx, &hub.Participant{ConversationID: id, PrincipalID: "agt_m", Kind: hub.PrincipalAgent, OwnerID: "usr_m", Role: hub.RoleMember, JoinedAt: at}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			want = append(want, w.add(fmt.Sprintf("conv_many%02d", i), "m/agent", hub.MessageSent, "", fmt.Sprintf("needle number %d", i)))
		}
		got := w.search(hub.SearchFilter{ParticipantID: "agt_m"}, "needle")
		slices.Sort(got)
		if diff := cmp.Diff(want[10:], got); diff != "" { // equal matches: the newest
			t.Errorf("60 conversations, 50 at most (-want +got):\n%s", diff)
		}
		if got := w.search(hub.SearchFilter{ParticipantID: "agt_m", ConversationID: "conv_many07"}, "needle"); !slices.Equal(got, want[7:8]) {
			t.Errorf("one of them: %v, want %v", got, want[7:8])
		}

		// The best match is older than the newest window of matches.
		best := w.add("conv_many00", "m/agent", hub.MessageSent, "haystack haystack", "haystack haystack haystack")
		for i := range fulltext.Window {
			w.add(fmt.Sprintf("conv_many%02d", i%60), "m/agent", hub.MessageSent, "", fmt.Sprintf("a haystack of words, %d", i))
		}
		if got := w.search(hub.SearchFilter{ParticipantID: "agt_m"}, "haystack"); len(got) != 50 || slices.Contains(got, best) {
			t.Errorf("more matches than the window: %d found, the oldest best among them: %v", len(got), slices.Contains(got, best))
		}
		if got := w.search(hub.SearchFilter{ParticipantID: "agt_m"}, "haystack -words"); !slices.Equal(got, []string{best}) {
			t.Errorf("within the window: %v, want %s", got, best)
		}
	})
}

// TestSearchAfterBackup: a backup's index still names its messages (the
// copy keeps their rowids).
func TestSearchAfterBackup(t *testing.T) {
	db := storetest.OpenSQLite(t)
	w := newSearchWorld(t, db)
	var want []string
	for i := range 30 {
		id := w.add("conv_a", "alice/a", hub.MessageSent, "", fmt.Sprintf("backup words %d", i))
		if i%3 == 0 {
			w.add("conv_a", "alice/a", hub.MessageHeld, "", "held words")
		}
		want = append(want, id)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	copied, err := store.Open(ctx, store.Options{Database: path})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	w.db = copied
	got := w.search(hub.SearchFilter{ParticipantID: "agt_a"}, "backup words")
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search of the backup (-want +got):\n%s", diff)
	}
}

// TestSearchIndexFollowsEachUpdate: Updates committed together are each
// indexed, and one that fails leaves nothing in the index.
func TestSearchIndexFollowsEachUpdate(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Go(func() {
				db.Update(ctx, func(tx hub.Tx) error {
					m := &hub.Message{ID: fmt.Sprintf("msg_b%02d", i), ConversationID: "conv_a", Seq: int64(100 + i), Status: hub.MessageSent,
						SenderID: "agt_a", SenderKind: hub.PrincipalAgent, SenderHandle: "alice/a", Body: fmt.Sprintf("batched words, number %d", i),
						Format: hub.FormatText, Kind: hub.MessageText, Author: hub.AuthorAgent, Authority: hub.AuthorityAgent,
						OwnerID: "usr_alice", OwnerHandle: "alice", CreatedAt: time.UnixMilli(5_000_000).UTC()}
					if err := tx.InsertMessage(ctx, m); err != nil {
						return err
					}
					if i%2 == 1 {
						return errors.New("refused")
					}
					return nil
				})
			})
		}
		wg.Wait()
		var want []string
		for i := 0; i < 40; i += 2 {
			want = append(want, fmt.Sprintf("msg_b%02d", i))
		}
		got := w.search(hub.SearchFilter{ParticipantID: "agt_a"}, "batched words")
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("indexed (-want +got):\n%s", diff)
		}
	})
}

// equivalentTexts stores messages whose words are written in forms that
// read the same as plain queries, and returns their ids: a decomposed
// résumé, a full-width zebra, Straße, a Chinese sentence and a Korean
// one.
func equivalentTexts(w *searchWorld) (resume, zebra, strasse, chinese, korean string) {
	resume = w.add("conv_a", "alice/a", hub.MessageSent, "", "my Re\u0301sume\u0301 is attached")
	zebra = w.add("conv_a", "alice/a", hub.MessageSent, "", "a ｚｅｂｒａ crossing")
	strasse = w.add("conv_a", "alice/a", hub.MessageSent, "Hauptstraße 5", "the address")
	chinese = w.add("conv_a", "carol", hub.MessageSent, "", "我明天去東京开会")
	korean = w.add("conv_a", "carol", hub.MessageSent, "", "서울에서 만나요")
	return
}

// TestSearchFindsTextThatReadsTheSame: index and query are normalised
// alike (NFKC, case-folded) and CJK runs are found inside, on both stores
// (§18): composed or decomposed, full-width or not, ß or ss, and a word
// inside a sentence written without spaces — but words in a row only in
// that order.
func TestSearchFindsTextThatReadsTheSame(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		w := newSearchWorld(t, db)
		resume, zebra, strasse, chinese, korean := equivalentTexts(w)
		approved := w.add("conv_a", "carol", hub.MessageHeld, "", "held")
		err := db.Update(ctx, func(tx hub.Tx) error {
			return tx.DecideMessage(ctx, &hub.Message{ID: approved, Status: hub.MessageSent, Seq: 90, Body: "大阪で会いましょう",
				OriginalBody: "held", Authority: hub.AuthorityEdited, DecidedBy: "usr_carol", DecidedAt: time.UnixMilli(3_000_000).UTC()})
		})
		if err != nil {
			t.Fatal(err)
		}
		reader := hub.SearchFilter{ParticipantID: "agt_a"}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"résumé", []string{resume}},
			{"re\u0301sume\u0301", []string{resume}},
			{"RÉSUMÉ", []string{resume}},
			{"resume", []string{}}, // accents still count
			{"zebra", []string{zebra}},
			{"ｚｅｂｒａ", []string{zebra}},
			{"ZEBRA crossing", []string{zebra}},
			{"hauptstrasse", []string{strasse}},
			{"HAUPTSTRASSE", []string{strasse}},
			{"東京", []string{chinese}},
			{"东京", []string{}}, // another character, not a form of the same one
			{"東京开会", []string{chinese}},
			{`"去東京"`, []string{chinese}},
			{"开会東京", []string{}},
			{"東", []string{chinese}},
			{"京 明", []string{chinese}},
			{"東 -开会", []string{}},
			{"서울", []string{korean}},
			{"만나요", []string{korean}},
			{"大阪", []string{approved}},
			{"会", []string{chinese, approved}}, // the end of one run, inside the other
			{"会い", []string{approved}},
		} {
			got := w.search(reader, c.query)
			slices.Sort(got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.query, diff)
			}
		}
	})
}

// TestSearchReindexedByMigration: messages indexed as the store did before
// migration 0018 (their words as written) are found by their equivalent
// forms once it has run, on both stores.
func TestSearchReindexedByMigration(t *testing.T) {
	// equivalentTexts' messages in conv_a, as palaver at migration 0017
	// stored them: a sent message is indexed as it is written (SQLite:
	// noted by 0015's trigger, put in the index by the writer before it
	// commits; PostgreSQL: the generated column).
	rows := []string{
		`INSERT INTO conversations (id, kind, status, creator_id, created_at, updated_at, last_seq) VALUES ('conv_a', 'group', 'open', 'agt_a', 1000000, 1000000, 5)`,
		`INSERT INTO participants (conversation_id, principal_id, kind, owner_id, role, joined_at) VALUES
			('conv_a', 'agt_a', 'agent', 'usr_alice', 'member', 1000000), ('conv_a', 'usr_carol', 'user', 'usr_carol', 'member', 1000000)`,
	}
	for i, m := range []struct{ sender, summary, body string }{
		{"alice/a", "", "my Re\u0301sume\u0301 is attached"},
		{"alice/a", "", "a ｚｅｂｒａ crossing"},
		{"alice/a", "Hauptstraße 5", "the address"},
		{"carol", "", "我明天去東京开会"},
		{"carol", "", "서울에서 만나요"},
	} {
		n, hash := i+1, sha256.Sum256([]byte(m.body))
		rows = append(rows, fmt.Sprintf(`INSERT INTO messages (id, conversation_id, seq, status, sender_id, sender_kind, sender_handle, body, summary,
			format, kind, author, authority, owner_id, owner_handle, created_at, body_hash)
			VALUES ('msg_%03d', 'conv_a', %d, 'sent', 'agt_%s', 'agent', '%s', '%s', '%s', 'text', 'text', 'agent', 'agent', 'usr_x', 'x', %d, '%x')`,
			n, n, m.sender, m.sender, m.body, m.summary, 1_000_000+n*60_000, hash[:12]))
	}
	resume, zebra, strasse, chinese := "msg_001", "msg_002", "msg_003", "msg_004"
	for _, c := range []struct {
		dialect string
		index   []string // what the writer ran before each commit
	}{
		{"sqlite", []string{`INSERT INTO message_search (rowid, conversation, summary, body)
			SELECT m.rowid, replace(m.conversation_id, '_', ''), m.summary, m.body
			FROM message_search_pending p JOIN messages m ON m.rowid = p.message_rowid`, `DELETE FROM message_search_pending`}},
		{"postgres", nil},
	} {
		t.Run(c.dialect, func(t *testing.T) {
			database := filepath.Join(t.TempDir(), "palaver.db")
			if c.dialect == "postgres" {
				database = storetest.Schema(t)
			}
			openThrough(t, database, 17, slices.Concat(rows, c.index)...).Close()

			db, err := store.Open(ctx, store.Options{Database: database})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			w := &searchWorld{t: t, db: db}
			reader := hub.SearchFilter{ParticipantID: "agt_a"}
			for query, want := range map[string]string{"résumé": resume, "zebra": zebra, "hauptstrasse": strasse, "東京": chinese} {
				if got := w.search(reader, query); !slices.Equal(got, []string{want}) {
					t.Errorf("%s after the migration: %v; want %s", query, got, want)
				}
			}
		})
	}
}
