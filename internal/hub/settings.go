package hub

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Settings are the hub's tunable numbers; DefaultSettings gives DESIGN.md's
// values, and Tunables names those a server's flags set.
type Settings struct {
	// WaitsPerAgent is how many wait_for_messages one agent may hold (§6),
	// WaitsPerPerson how many waits a person's scripts and tabs may.
	WaitsPerAgent  int
	WaitsPerPerson int
	// EventRetention is how long events (and so cursors) are kept (§6).
	EventRetention time.Duration

	// The brakes' thresholds (§7, brakes.go).
	BrakeSettings

	// StuckAfter is how long a processing attempt may run before it is
	// stuck and comes back first (§5).
	StuckAfter time.Duration

	// TokenRate is how many requests a second one token may make, and
	// TokenBurst how many at once (§15).
	TokenRate  float64
	TokenBurst int

	// PermissionTTL is how long a permission request waits for the
	// owner before it expires (§19).
	PermissionTTL time.Duration
}

// DefaultSettings returns the values DESIGN.md names.
func DefaultSettings() Settings {
	return Settings{
		WaitsPerAgent: 5, WaitsPerPerson: 20, EventRetention: 30 * 24 * time.Hour,
		BrakeSettings: defaultBrakeSettings(),
		StuckAfter:    30 * time.Minute,
		TokenRate:     DefaultTokenRate, TokenBurst: DefaultTokenBurst,
		PermissionTTL: DefaultPermissionTTL,
	}
}

// A Tunable is a setting a server is given by flag or environment (§14),
// declared once here and read by the flags, their environment variables,
// their validation, the start-up log and the docs' test. Exactly one of
// Int, Duration and Float points into Settings.
type Tunable struct {
	Name     string // the flag's name: pause-turns is --pause-turns, PALAVER_PAUSE_TURNS
	Usage    string // what it is, for --help and the docs
	Unit     string // a Float's unit: "requests a second"
	Int      func(*Settings) *int
	Duration func(*Settings) *time.Duration
	Float    func(*Settings) *float64
}

// Tunables lists the settings a server's flags set: the brakes' first.
var Tunables = append(brakeTunables(),
	Tunable{Name: "stuck-after", Usage: "how long a processing attempt runs before it is stuck and comes back first, like 30m", Duration: func(s *Settings) *time.Duration { return &s.StuckAfter }},
	Tunable{Name: "token-rate", Usage: "requests a second one token may make; over it, 429 or a rate_limited tool error", Unit: "requests a second", Float: func(s *Settings) *float64 { return &s.TokenRate }},
	Tunable{Name: "token-burst", Usage: "requests one token may make at once, above --token-rate", Int: func(s *Settings) *int { return &s.TokenBurst }},
	Tunable{Name: "permission-ttl", Usage: "how long a permission request a channel relays waits for the agent's owner before it expires, like 10m", Duration: func(s *Settings) *time.Duration { return &s.PermissionTTL }},
)

// Env is the tunable's environment variable.
func (t Tunable) Env() string {
	return "PALAVER_" + strings.ToUpper(strings.ReplaceAll(t.Name, "-", "_"))
}

// Value is the tunable's value in s, as a flag would spell it.
func (t Tunable) Value(s *Settings) string {
	switch {
	case t.Int != nil:
		return fmt.Sprint(*t.Int(s))
	case t.Duration != nil:
		return t.Duration(s).String()
	default:
		return fmt.Sprint(*t.Float(s))
	}
}

// A SettingError names a setting refused by Validate: its Tunable name
// when it has one, what it was and what to give instead.
type SettingError struct {
	Name, Got, Want string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("setting %s is %s: give %s", e.Name, e.Got, e.Want)
}

// Validate refuses settings that would switch a rule off by accident —
// a count below 1, a duration or a rate not above 0 — with one
// *SettingError for each, joined.
func (s Settings) Validate() error {
	var errs []error
	check := func(t Tunable) {
		switch {
		case t.Int != nil && *t.Int(&s) < 1:
			errs = append(errs, &SettingError{Name: t.Name, Got: t.Value(&s), Want: "1 or more"})
		case t.Duration != nil && *t.Duration(&s) <= 0:
			errs = append(errs, &SettingError{Name: t.Name, Got: t.Value(&s), Want: "a positive duration, like 30m"})
		case t.Float != nil && (!(*t.Float(&s) > 0) || math.IsInf(*t.Float(&s), 0)):
			errs = append(errs, &SettingError{Name: t.Name, Got: t.Value(&s), Want: fmt.Sprintf("a positive number of %s, like %s", t.Unit, t.Value(new(DefaultSettings())))})
		}
	}
	for _, t := range Tunables {
		check(t)
	}
	// The settings no flag sets.
	for _, t := range []Tunable{
		{Name: "waits-per-agent", Int: func(s *Settings) *int { return &s.WaitsPerAgent }},
		{Name: "waits-per-person", Int: func(s *Settings) *int { return &s.WaitsPerPerson }},
		{Name: "event-retention", Duration: func(s *Settings) *time.Duration { return &s.EventRetention }},
		{Name: "budget-window", Duration: func(s *Settings) *time.Duration { return &s.BudgetWindow }},
		{Name: "loop-voice-turns", Int: func(s *Settings) *int { return &s.LoopVoiceTurns }},
		{Name: "loop-window", Duration: func(s *Settings) *time.Duration { return &s.LoopWindow }},
	} {
		check(t)
	}
	return errors.Join(errs...)
}
