package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestWordsNameHubPlaceholders checks each profile's table of words
// against the hub's messages: every name a table gives its own word for
// is a placeholder some hub message writes ({name}), so a table holds no
// word nothing says, and a placeholder renamed in the hub cannot leave a
// profile speaking the default profile's words unnoticed.
func TestWordsNameHubPlaceholders(t *testing.T) {
	files, err := filepath.Glob("../hub/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the hub's sources: %v, %v", files, err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for name, words := range map[string]hub.Words{"inbox": inboxWords, "rooms": roomsWords, "rooms people": roomsPeopleWords} {
		for key, word := range words {
			if !strings.Contains(src.String(), "{"+key+"}") {
				t.Errorf("%s profile: no hub message writes {%s} (said %q)", name, key, word)
			}
			if got := words.Say("{" + key + "}"); got != word {
				t.Errorf("%s profile says {%s} as %q, want %q", name, key, got, word)
			}
		}
	}
}
