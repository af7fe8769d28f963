// Package clients holds the clients Palaver serves to whoever asks:
// palaver.py, a one-file Python client for harnesses that have a shell but
// no MCP (docs/clients.md).
package clients

import (
	_ "embed"
	"net/http"

	"github.com/palaverhq/palaver/internal/httpx"
)

// Python is palaver.py as kept in this directory.
//
//go:embed palaver.py
var Python []byte

// ServePython answers GET /palaver.py with the script, to anyone: it holds
// no secret, and a harness fetches it before it has a token's use for one.
func ServePython(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Disposition", `inline; filename="palaver.py"`)
	httpx.WriteBytes(w, "text/x-python; charset=utf-8", Python)
}
