package a2a

import (
	"net/http"
	"strconv"
	"strings"
)

// The A2A revisions the face speaks (§18): 1.0, the current one, and 0.3
// for the clients before it. A client names its revision in the
// A2A-Version header (or the A2A-Version query parameter) of every
// request, by major and minor only; none means 0.3, as A2A 1.0 says
// (its §3.6), so a 0.3 client, which sends none, is served as before.
const (
	Version10 = "1.0"
	Version03 = "0.3"
)

// versionHeader is the service parameter a client names its revision by.
const versionHeader = "A2A-Version"

// requestedVersion is the revision r asks for: Version10 or Version03, or
// "" with what it named when that is neither.
func requestedVersion(r *http.Request) (version, named string) {
	named = strings.TrimSpace(r.Header.Get(versionHeader))
	if named == "" {
		named = strings.TrimSpace(r.URL.Query().Get(versionHeader))
	}
	if named == "" {
		return Version03, ""
	}
	switch majorMinor(named) {
	case "1.0":
		return Version10, named
	case "0.3":
		return Version03, named
	}
	return "", named
}

// cardVersion is the revision of the card r gets: 0.3's when it names none
// or a 0.x, else 1.0's, which lists every interface with its revision, so
// a client of a later revision can still tell what is served.
func cardVersion(r *http.Request) string {
	v, named := requestedVersion(r)
	if v == "" && !strings.HasPrefix(majorMinor(named), "0.") {
		return Version10
	}
	if v == "" {
		return Version03
	}
	return v
}

// majorMinor is a version's major.minor ("1.0.1" → "1.0", "1" → "1.0"),
// or "" when it does not start with one.
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	major, err := strconv.Atoi(parts[0])
	if err != nil || major < 0 {
		return ""
	}
	minor := 0
	if len(parts) > 1 {
		if minor, err = strconv.Atoi(parts[1]); err != nil || minor < 0 {
			return ""
		}
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}
