package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/cli"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestConformanceAuthorization runs the official conformance suite's
// authorization-server checks (`conformance authorization`: the metadata
// endpoint and the authorization code grant) against a real `palaver
// serve`. The suite registers nothing itself, so the test registers a
// public client by dynamic registration with the suite's callback as its
// redirect URI; the suite then prints the authorization URL for a person
// to open, and the test plays that person: signs in to the dashboard,
// opens the URL, and allows on the consent page. Every check must pass.
//
// Skipped unless PALAVER_CONFORMANCE names the suite's executable
// (CONTRIBUTING.md).
func TestConformanceAuthorization(t *testing.T) {
	bin := os.Getenv("PALAVER_CONFORMANCE")
	if bin == "" {
		t.Skip("PALAVER_CONFORMANCE is not set; it names the MCP conformance suite's executable (CONTRIBUTING.md says how to install it)")
	}
	db := filepath.Join(t.TempDir(), "palaver.db")
	target, logs := servePalaver(t, db)
	base := target.String()
	const password = "conformance password"
	palaver(t, "user", "create", "conformance", "--database", db)
	if code := cli.Main(context.Background(), []string{"user", "password", "conformance", "--database", db}, strings.NewReader(password+"\n"),
		io.Discard, io.Discard, func(string) string { return "" }); code != 0 {
		t.Fatalf("palaver user password: exit %d", code)
	}
	palaver(t, "agent", "create", "conformance/suite", "--description", "runs the MCP conformance suite", "--database", db)

	// The suite's callback listens on this port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	reg, _ := json.Marshal(map[string]any{"client_name": "MCP conformance suite", "redirect_uris": []string{"http://127.0.0.1:" + port + "/callback"}})
	resp, err := http.Post(base+"/register", "application/json", bytes.NewReader(reg))
	if err != nil {
		t.Fatal(err)
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&client)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || client.ClientID == "" {
		t.Fatalf("registering the suite's client: %d %+v", resp.StatusCode, client)
	}

	out := t.ArtifactDir()
	cmd := exec.CommandContext(t.Context(), bin, "authorization", "--url", base, "--client-id", client.ClientID,
		"--resource", base+"/mcp/", "--port", port, "--output-dir", out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var printed bytes.Buffer
	cmd.Stderr = &printed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	authURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			printed.WriteString(line + "\n")
			if strings.HasPrefix(line, base+"/authorize?") {
				authURL <- line
			}
		}
	}()
	select {
	case u := <-authURL:
		consentAsPerson(t, base, "conformance", password, u)
	case <-time.After(60 * time.Second):
		t.Fatalf("the suite printed no authorization URL:\n%s", printed.String())
	}
	err = cmd.Wait()
	n := conformanceCounts(t, out)
	t.Logf("authorization: %d scenarios, checks: %d passed, %d failed, %d warned, %d skipped",
		n.scenarios, n.status["SUCCESS"], n.status["FAILURE"], n.status["WARNING"], n.status["SKIPPED"])
	if err != nil || n.scenarios != 2 || n.status["SUCCESS"] == 0 || n.status["FAILURE"]+n.status["WARNING"]+n.status["SKIPPED"] != 0 {
		t.Errorf("conformance authorization: %v; want both scenarios, every check passed:\n%s", err, printed.String())
	}
	if errs := logs.lines("level=ERROR"); len(errs) > 0 {
		t.Errorf("the server logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// consentAsPerson is a person in a browser: signs in to the dashboard,
// opens the authorization URL, and allows every scope asked for on the
// consent page, acting as their first agent; the redirect back to the
// client is followed.
func consentAsPerson(t *testing.T, base, handle, password, authURL string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.PostForm(base+"/signin", url.Values{"handle": {handle}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/consent" {
		t.Fatalf("the authorization URL led to %d at %s", resp.StatusCode, resp.Request.URL)
	}
	form := resp.Request.URL.Query()
	form.Set("agent", "suite")
	form.Set("decision", "allow")
	form["grant"] = hub.AllScopes
	resp, err = c.PostForm(base+"/consent", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasSuffix(resp.Request.URL.Path, "/callback") {
		t.Fatalf("allowing led to %d at %s", resp.StatusCode, resp.Request.URL)
	}
}
