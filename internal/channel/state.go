package channel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The channel keeps its cursor in a state file, one per server, agent and
// session, so that a restart of Claude Code (and so of the channel) or of
// the server neither loses nor repeats an event: it goes on after the last
// event it pushed. The file is written after each push, atomically (a new
// file renamed over the old), readable by its owner alone.

// state is the state file's content.
type state struct {
	Server   string    `json:"server"`
	Agent    string    `json:"agent"`
	Instance string    `json:"instance"`
	Cursor   string    `json:"cursor"`
	Saved    time.Time `json:"saved"`
}

// stateDir is where state files go by default: $XDG_STATE_HOME/palaver/channel,
// else ~/.local/state/palaver/channel.
func stateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "palaver", "channel"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("no home folder to keep the channel's cursor in: give --state-file PATH")
		}
	}
	return filepath.Join(home, ".local", "state", "palaver", "channel"), nil
}

// statePath is the default state file of agent's session on server.
func statePath(dir, server, agent, instance string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(dir, strings.ReplaceAll(agent, "/", "+")+"."+instance+"."+hex.EncodeToString(sum[:4])+".json")
}

// loadState reads the state file; a file that is not there is no state.
// One for another server, agent or session is refused: it names what it
// is for.
func loadState(path, server, agent, instance string) (*state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state file: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil || s.Cursor == "" {
		return nil, fmt.Errorf("the state file %s is not one palaver channel wrote; move it away to start from the latest event", path)
	}
	if s.Server != server || s.Agent != agent || s.Instance != instance {
		return nil, fmt.Errorf("the state file %s is the cursor of %s's session %s on %s, not of %s's session %s on %s: give each channel its own --state-file",
			path, s.Agent, s.Instance, s.Server, agent, instance, server)
	}
	return &s, nil
}

// save writes the state file atomically, mode 0600 in a folder of mode
// 0700, synced before it replaces the old one.
func (s *state) save(path string) error {
	s.Saved = time.Now().UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the state folder: %w", err)
	}
	f, err := os.CreateTemp(dir, ".channel-*")
	if err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	defer os.Remove(f.Name()) // once renamed, nothing is there
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing the state file %s: %w", path, err)
}
