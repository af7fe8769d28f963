package api_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestExport: GET /api/v1/conversations/{id}/export and
// /api/v1/projects/{id}/export answer the archive as an attachment to a
// person who may see it, and not_found to anyone else (§18).
func TestExport(t *testing.T) {
	s := newServer(t)
	conv := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"alice"}})["conversation_id"].(string)
	s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "Ready for review."})
	if code, _ := s.rest(t, "alice", "POST", "/conversations/"+conv+"/messages", map[string]any{"body": "Thanks."}); code != http.StatusOK {
		t.Fatalf("alice posting: %d", code)
	}
	_, p := s.rest(t, "alice", "POST", "/projects", map[string]any{"name": "Launch"})
	project := p["project_id"].(string)
	if code, out := s.rest(t, "alice", "PUT", "/projects/"+project+"/agents/planner", map[string]any{"access": "speak"}); code != http.StatusOK {
		t.Fatalf("bringing the planner in: %d %v", code, out)
	}
	thread := s.tool(t, "alice/planner", "open_thread", map[string]any{"project_id": project, "title": "Plan"})["conversation_id"].(string)
	s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": thread, "body": "First, the notes."})

	get := func(person, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url+"/api/v1"+path, nil)
		req.Header.Set("Authorization", "Bearer "+s.people[person])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, tc := range []struct{ path, id string }{{"/conversations/" + conv + "/export", conv}, {"/projects/" + project + "/export", project}} {
		resp, body := get("alice", tc.path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" ||
			resp.Header.Get("Content-Disposition") != "attachment; filename=palaver-"+tc.id+".zip" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET %s: %d %v", tc.path, resp.StatusCode, resp.Header)
		}
		z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("GET %s: not a zip: %v", tc.path, err)
		}
		var names []string
		var doc struct {
			Conversations []struct {
				ConversationID string `json:"conversation_id"`
				Messages       []struct{ Body string }
			}
		}
		for _, f := range z.File {
			names = append(names, f.Name)
			if f.Name == "export.json" {
				r, _ := f.Open()
				if err := json.NewDecoder(r).Decode(&doc); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(names) != 2 || names[0] != "export.md" || names[1] != "export.json" || len(doc.Conversations) != 1 || len(doc.Conversations[0].Messages) == 0 {
			t.Errorf("GET %s: files %v, %+v", tc.path, names, doc)
		}

		if code, out := s.rest(t, "bob", "GET", tc.path, nil); code != http.StatusNotFound || out["error"].(map[string]any)["code"] != "not_found" {
			t.Errorf("bob GET %s: %d %v, want 404 not_found", tc.path, code, out)
		}
	}
}
