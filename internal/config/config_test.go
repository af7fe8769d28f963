package config

import (
	"flag"
	"strings"
	"testing"
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
