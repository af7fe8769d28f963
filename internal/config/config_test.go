package config

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

func TestFlagsOverEnvOverDefaults(t *testing.T) {
	env := map[string]string{"PALAVER_ADDR": "0.0.0.0:9000", "PALAVER_DATABASE": "/var/lib/palaver/p.db", "PALAVER_SYNCHRONOUS": "normal"}
	c := Default()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"--addr", "127.0.0.1:7000"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:7000" || c.Database != "/var/lib/palaver/p.db" || c.Synchronous != "NORMAL" || c.LogFormat != "text" {
		t.Fatalf("config = %s", c)
	}
}

func TestValidateSaysWhatToGive(t *testing.T) {
	c := Config{Addr: "nowhere", Database: "", BaseURL: "ftp://x/y", LogFormat: "xml", Synchronous: "OFF", Origins: []string{"claude.ai"}, Proxies: []string{"10.0.0.0/33"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"host:port", "file path", "scheme and host only", "text or json", "FULL or NORMAL", "https://claude.ai", "10.0.0.0/24"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestTokenRate: the per-token request rate defaults to the hub's, is set
// by PALAVER_TOKEN_RATE and PALAVER_TOKEN_BURST or the flags, and must be
// positive.
func TestTokenRate(t *testing.T) {
	c := Default()
	if c.TokenRate != 1000 || c.TokenBurst != 2000 {
		t.Fatalf("defaults: rate %v burst %d, want 1000 and 2000", c.TokenRate, c.TokenBurst)
	}
	env := map[string]string{"PALAVER_TOKEN_RATE": "2.5", "PALAVER_TOKEN_BURST": "10"}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.ServeFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"--token-burst", "20"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || c.TokenRate != 2.5 || c.TokenBurst != 20 {
		t.Fatalf("rate %v burst %d (%v), want 2.5 and 20", c.TokenRate, c.TokenBurst, err)
	}
	if !strings.Contains(c.String(), "token_rate=2.5 token_burst=20") {
		t.Errorf("String() = %s", c)
	}
	c.TokenRate, c.TokenBurst = 0, 0
	err := c.Validate()
	for _, want := range []string{"--token-rate 0: give a positive number of requests a second, like 1000", "--token-burst 0: give 1 or more"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// TestDocsListEveryTunable: docs/tools.md's table of brakes gives every
// brake and its brake settings every brake's tunable with its variable
// and default, and docs/deploy.md's table every other tunable, so the
// docs cannot drift from the flags.
func TestDocsListEveryTunable(t *testing.T) {
	defaults := hub.DefaultSettings()
	row := func(tu hub.Tunable) string {
		v := tu.Value(&defaults)
		if tu.Duration != nil {
			v = strings.TrimSuffix(v, "0s") // 30m0s is written 30m
			if strings.HasSuffix(v, "h0m") {
				v = strings.TrimSuffix(v, "0m")
			}
			v = "`" + v + "`"
		}
		return "| `--" + tu.Name + "` | `" + tu.Env() + "` | " + v + " | "
	}
	want := map[string][]string{}
	brakes := map[string]bool{}
	for _, b := range hub.Brakes {
		want["tools.md"] = append(want["tools.md"], "| `"+b.Word+"` | ")
		if b.Setting != nil {
			want["tools.md"] = append(want["tools.md"], row(*b.Setting))
			brakes[b.Setting.Name] = true
		}
	}
	for _, tu := range hub.Tunables {
		if !brakes[tu.Name] {
			want["deploy.md"] = append(want["deploy.md"], row(tu))
		}
	}
	for doc, rows := range want {
		b, err := os.ReadFile("../../docs/" + doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if !strings.Contains(string(b), r) {
				t.Errorf("docs/%s has no row starting %q", doc, r)
			}
		}
	}
}
