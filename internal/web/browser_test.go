package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var screenshots = flag.String("screenshots", "", "also save the browser tests' screenshots in this directory (docs/images/dashboard)")

// chromium is Debian's chromium (or another Chrome) on PATH, or the test
// is skipped saying how to run it; -short skips the browser tests.
func chromium(t *testing.T) string {
	if testing.Short() {
		t.Skip("browser tests skipped under -short")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("browser tests skipped: no chromium on PATH. Install Debian's chromium (apt-get install chromium), as .ci/run does, to run them")
	return ""
}

// tab is one browser tab on the site, with JavaScript on or off.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // where screenshots go
	shot string // the screenshot names' prefix
}

func newTab(t *testing.T, s *site, js bool) *tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.WindowSize(1100, 800), chromedp.Flag("lang", "en-US"))
	actx, cancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancel)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first run starts the browser; it lives as long as bctx.
	if err := chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !js})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	shot := "js-off-"
	if js {
		shot = ""
	}
	return &tab{t: t, ctx: bctx, base: s.url, dir: t.ArtifactDir(), shot: shot}
}

// do runs actions with a deadline.
func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		b.t.Fatalf("in the browser: %v (at %s)", err, b.location())
	}
}

func (b *tab) location() string {
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	return loc
}

// open goes to a page and waits for it.
func (b *tab) open(path, page string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), b.at(page))
}

// at waits for the page of this name.
func (b *tab) at(page string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(`main[data-page="` + page + `"]`))
}

// waitText waits until the element the XPath finds holds want; the
// browser looks again until it does.
func (b *tab) waitText(xpath, want string) {
	b.t.Helper()
	b.do(chromedp.WaitVisible(chromedp.Search(xpath + `[contains(., '` + want + `')]`)))
}

// notice and live are the XPaths of a page's one-time notice and of an
// element by id.
const notice = `//p[@class='notice']`

func byID(id string) string { return `//*[@id='` + id + `']` }

// screenshot saves the whole page as NAME.png under the test's artifacts
// (and in -screenshots).
func (b *tab) screenshot(name string) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	for _, dir := range []string{b.dir, *screenshots} {
		if dir == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, b.shot+name+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// TestBrowserFlow walks the dashboard in real Chromium, with JavaScript on
// and off: first-run setup → create an agent → put it in review → mint a
// token → an MCP client connects with it and sends → the message waits
// under Approvals → the person edits and approves it → the recipient gets
// it marked owner_edited. Every page is saved as a screenshot.
func TestBrowserFlow(t *testing.T) {
	chromium(t)
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "javascript", false: "no-javascript"}[js], func(t *testing.T) {
			s := newSite(t)
			b := newTab(t, s, js)

			b.open("/", "setup")
			b.screenshot("setup")
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
				chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "Alice"),
				chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
				chromedp.Click(chromedp.CSS(`form[action="/setup"] button`)),
				b.at("agents"))
			b.screenshot("agents")

			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=slug]`), "planner"),
				chromedp.SendKeys(chromedp.CSS(`input[name=description]`), "Plans the release and hands out the work"),
				chromedp.Click(chromedp.CSS(`form[action="/agents"] button`)),
				b.at("agent"))
			b.waitText(notice, "Created alice/planner")
			b.do(chromedp.SetValue(chromedp.CSS(`select[name=mode]`), "review"),
				chromedp.Click(chromedp.CSS(`form[action="/agents/planner/mode"] button`)))
			b.waitText(notice, "review mode")
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "laptop"),
				chromedp.Click(chromedp.CSS(`form[action="/agents/planner/tokens"] button`)),
				b.at("token"))
			secret, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.ID("secret")))
			if err != nil || !strings.HasPrefix(secret, "plv_") {
				t.Fatalf("the token page: %q, %v", secret, err)
			}
			b.screenshot("token")

			// The recipient, and the MCP client of the planner with the
			// token from the page.
			_, reviewerToken := s.agent(t, "alice/reviewer")
			planner := mcpClient(t, s, secret)
			reviewer := mcpClient(t, s, reviewerToken)
			opened := call(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})
			conv, _ := opened["conversation_id"].(string)
			sent := call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "The release is ready to go.", "instance": "laptop"})
			if sent["status"] != "held" {
				t.Fatalf("a send in review mode: %v", sent)
			}

			// More for the pages to show: a question, and bob asking to be
			// alice's contact.
			call(t, planner, "ask_owner", map[string]any{"question": "Tag the release v2.0 or v2.0.0?", "options": []string{"v2.0", "v2.0.0"}, "instance": "laptop"})
			s.hub.CreateUser(ctx, "bob", "Bob")
			if _, err := s.reach.RequestContact(ctx, mustUser(t, s, "bob"), "alice", ""); err != nil {
				t.Fatal(err)
			}

			b.open("/approvals", "approvals")
			b.waitText(byID("approval-list"), "The release is ready to go.")
			b.screenshot("approvals")
			id := sent["message_id"].(string)
			b.do(chromedp.SendKeys(chromedp.CSS(`textarea[name=body]`), "Tag it v2.0 first. "),
				chromedp.Click(chromedp.CSS(`form[action="/approvals/`+id+`/approve"] button:not([form])`)))
			b.waitText(notice, "owner_edited")
			// Reject, the button beside Approve, sends nothing.
			second := call(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "Ship it now, untested."})
			b.open("/approvals", "approvals")
			b.do(chromedp.Click(chromedp.CSS(`button[form="reject-` + second["message_id"].(string) + `"]`)))
			b.waitText(notice, "Rejected")

			read := call(t, reviewer, "read_messages", map[string]any{"conversation_id": conv})
			msgs, _ := read["messages"].([]any)
			if len(msgs) != 1 {
				t.Fatalf("the reviewer reads %v", read)
			}
			m := msgs[0].(map[string]any)
			prov, _ := m["provenance"].(map[string]any)
			if !strings.Contains(m["body"].(string), "Tag it v2.0 first.") || prov["authority"] != "owner_edited" {
				t.Fatalf("the reviewer got %v", m)
			}

			b.open("/conversations", "conversations")
			b.screenshot("conversations")
			b.open("/conversations/"+conv, "conversation")
			b.waitText(byID("messages"), "AI agent for @alice")
			b.waitText(byID("messages"), "owner_edited")
			b.screenshot("conversation")
			b.open("/agents/planner", "agent")
			b.screenshot("agent")
			// And on a phone.
			b.do(chromedp.EmulateViewport(360, 780))
			b.open("/agents/planner", "agent")
			b.screenshot("agent-phone")
			b.open("/conversations", "conversations")
			b.screenshot("conversations-phone")
			b.do(chromedp.EmulateViewport(1100, 800)) // back to the desktop for the rest
			b.open("/contacts", "contacts")
			b.screenshot("contacts")
			b.open("/settings", "settings")
			b.screenshot("settings")
			b.open("/", "home")
			b.screenshot("home")
			b.do(chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)), b.at("signin"))
			b.screenshot("signin")
			// A wrong password says so on the page, JavaScript or not.
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
				chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "not the password"),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)))
			b.waitText(`//p[@class='error']`, "do not match")
			b.do(chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
				chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)), b.at("home"))
		})
	}
}

// TestBrowserLive: with JavaScript on, an approval arriving while the
// page is open shows without a reload — the count in the navigation and
// the list — over the event stream.
func TestBrowserLive(t *testing.T) {
	chromium(t)
	s := newSite(t)
	b := newTab(t, s, true)
	s.hub.CreateUser(ctx, "alice", "")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	s.hub.CreateUser(ctx, "bob", "")
	b.open("/signin", "signin")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
		b.at("home"))
	b.open("/approvals", "approvals")
	b.waitText(byID("approval-list"), "Nothing waits for you")
	bob, _ := s.hub.User(ctx, "bob")
	if _, err := s.reach.RequestContact(ctx, bob, "alice", ""); err != nil {
		t.Fatal(err)
	}
	b.waitText(byID("approval-list"), "@bob asks to be your contact")
	b.waitText(byID("waiting"), "1")

	// Her own words, written in from elsewhere (REST, another tab) into her
	// agents' conversation she takes no part in, show on its open page.
	planner, _ := s.agent(t, "alice/planner")
	s.agent(t, "alice/reviewer")
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	b.open("/conversations/"+v.Conversation.ID, "conversation")
	alice, _ := s.hub.User(ctx, "alice")
	if _, err := s.hub.PostAsPerson(ctx, alice, v.Conversation.ID, "written from a script", ""); err != nil {
		t.Fatal(err)
	}
	b.waitText(byID("messages"), "written from a script")
}

func mcpClient(t *testing.T, s *site, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "browser-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp/", HTTPClient: &http.Client{Transport: bearer{token}},
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and returns its structured result.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.StructuredContent)
	var out map[string]any
	json.Unmarshal(b, &out)
	if r.IsError {
		t.Fatalf("%s: %s", name, fmt.Sprint(r.Content))
	}
	return out
}
