// Package config holds the server's settings (DESIGN.md §14): defaults,
// PALAVER_* environment variables, and flags, in rising precedence.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Config is everything `palaver serve` and the admin commands are told.
type Config struct {
	// Addr is the listen address (host:port).
	Addr string
	// Database is the SQLite file path, or a postgres:// URL for replicas.
	Database string
	// BaseURL is the public URL used in OAuth metadata and links; "" means
	// each request's own scheme and host.
	BaseURL string
	// LogFormat is "text" or "json".
	LogFormat string
	// Synchronous is SQLite's synchronous setting: FULL or NORMAL (§13).
	Synchronous string
	// Origins are extra browser origins allowed to call the MCP endpoint.
	Origins []string
	// PrivateHosts are hosts whose OAuth client documents may be fetched,
	// and webhooks called, even at an address that is not globally
	// reachable (an exception to the egress policy, §10.6 and §18, for a
	// client or a receiver on the admin's own network).
	PrivateHosts []string
	// Proxies are the reverse proxies (addresses or CIDR prefixes) whose
	// X-Forwarded-For names the client; a proxy on the same machine is
	// always trusted.
	Proxies []string
	// VAPIDSubject is whom push services may contact about this server's
	// Web Push notifications (§19): a mailto: or https: URL; "" is
	// BaseURL when that is https.
	VAPIDSubject string
	// Settings are the hub's numbers; those of hub.Tunables are flags.
	hub.Settings
}

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8420"

// Default returns the defaults: 127.0.0.1:8420, ./palaver.db, and the
// hub's settings of DESIGN.md.
func Default() Config {
	return Config{Addr: DefaultAddr, Database: "./palaver.db", LogFormat: "text", Synchronous: "FULL", Settings: hub.DefaultSettings()}
}

// env names each setting's environment variable.
var env = map[string]string{
	"addr":               "PALAVER_ADDR",
	"database":           "PALAVER_DATABASE",
	"base-url":           "PALAVER_BASE_URL",
	"vapid-subject":      "PALAVER_VAPID_SUBJECT",
	"log-format":         "PALAVER_LOG_FORMAT",
	"synchronous":        "PALAVER_SYNCHRONOUS",
	"proxy":              "PALAVER_PROXIES",
	"origin":             "PALAVER_ORIGINS",
	"allow-private-host": "PALAVER_ALLOW_PRIVATE_HOSTS",
}

// The hub's tunables are flags of their own names, with their variables.
func init() {
	for _, t := range hub.Tunables {
		env[t.Name] = t.Env()
	}
}

// DatabaseFlag registers only --database on fs (for the admin commands),
// with its PALAVER_DATABASE default.
func (c *Config) DatabaseFlag(fs *flag.FlagSet, getenv func(string) string) {
	if v := getenv(env["database"]); v != "" {
		c.Database = v
	}
	fs.StringVar(&c.Database, "database", c.Database, "SQLite database file, or a postgres:// URL (env PALAVER_DATABASE)")
}

// AddrFlag registers only --addr on fs (for palaver health), with its
// PALAVER_ADDR default.
func (c *Config) AddrFlag(fs *flag.FlagSet, getenv func(string) string) {
	if v := getenv(env["addr"]); v != "" {
		c.Addr = v
	}
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (env "+env["addr"]+")")
}

// PrivateHostsFlag registers only --allow-private-host on fs (serve, and
// palaver webhook add), with its PALAVER_ALLOW_PRIVATE_HOSTS default.
func (c *Config) PrivateHostsFlag(fs *flag.FlagSet, getenv func(string) string) {
	if v := getenv(env["allow-private-host"]); v != "" {
		c.PrivateHosts = strings.Split(v, ",")
	}
	fs.Func("allow-private-host", "host that OAuth client documents may be fetched from, and webhooks sent to, at a private, loopback or other address that is not globally reachable (repeatable; env PALAVER_ALLOW_PRIVATE_HOSTS, comma-separated)", func(s string) error {
		c.PrivateHosts = append(c.PrivateHosts, s)
		return nil
	})
}

// ServeFlags registers every setting on fs, each defaulting to its
// environment variable when set.
func (c *Config) ServeFlags(fs *flag.FlagSet, getenv func(string) string) {
	c.DatabaseFlag(fs, getenv)
	c.AddrFlag(fs, getenv)
	str := func(p *string, name, usage string) {
		if v := getenv(env[name]); v != "" {
			*p = v
		}
		fs.StringVar(p, name, *p, usage+" (env "+env[name]+")")
	}
	str(&c.BaseURL, "base-url", "public URL of this server, like https://palaver.example.com")
	str(&c.VAPIDSubject, "vapid-subject", "whom push services may contact about this server's Web Push notifications: a mailto: or https: URL (default: --base-url when https)")
	str(&c.LogFormat, "log-format", "log format: text or json")
	str(&c.Synchronous, "synchronous", "SQLite synchronous: FULL (durable) or NORMAL (faster)")
	if v := getenv(env["origin"]); v != "" {
		c.Origins = strings.Split(v, ",")
	}
	fs.Func("origin", "extra browser origin allowed to call /mcp (repeatable; env PALAVER_ORIGINS, comma-separated)", func(s string) error {
		c.Origins = append(c.Origins, s)
		return nil
	})
	c.PrivateHostsFlag(fs, getenv)
	if v := getenv(env["proxy"]); v != "" {
		c.Proxies = strings.Split(v, ",")
	}
	fs.Func("proxy", "address or CIDR of a reverse proxy whose X-Forwarded-For names the client, for sign-in throttling (repeatable; env PALAVER_PROXIES, comma-separated)", func(s string) error {
		c.Proxies = append(c.Proxies, s)
		return nil
	})
	for _, t := range hub.Tunables {
		usage := t.Usage + " (env " + t.Env() + ")"
		v := getenv(t.Env())
		switch {
		case t.Int != nil:
			p := t.Int(&c.Settings)
			if n, err := strconv.Atoi(v); err == nil {
				*p = n
			}
			fs.IntVar(p, t.Name, *p, usage)
		case t.Duration != nil:
			p := t.Duration(&c.Settings)
			if d, err := time.ParseDuration(v); err == nil {
				*p = d
			}
			fs.DurationVar(p, t.Name, *p, usage)
		default:
			p := t.Float(&c.Settings)
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				*p = f
			}
			fs.Float64Var(p, t.Name, *p, usage)
		}
	}
}

// Validate checks every setting and says what to give instead.
func (c *Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("--addr %q: give host:port, like 127.0.0.1:8420", c.Addr))
	}
	if c.Database == "" {
		errs = append(errs, errors.New("--database is empty: give a file path, like ./palaver.db, or a postgres:// URL"))
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs = append(errs, fmt.Errorf("--base-url %q: give scheme and host only, like https://palaver.example.com", c.BaseURL))
		}
		c.BaseURL = strings.TrimSuffix(c.BaseURL, "/")
	}
	if c.VAPIDSubject != "" {
		u, err := url.Parse(c.VAPIDSubject)
		if err != nil || !(u.Scheme == "mailto" && strings.Contains(u.Opaque, "@") || u.Scheme == "https" && u.Host != "") {
			errs = append(errs, fmt.Errorf("--vapid-subject %q: give a mailto: or https: URL, like mailto:admin@example.com", c.VAPIDSubject))
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--log-format %q: give text or json", c.LogFormat))
	}
	c.Synchronous = strings.ToUpper(c.Synchronous)
	if c.Synchronous != "FULL" && c.Synchronous != "NORMAL" {
		errs = append(errs, fmt.Errorf("--synchronous %q: give FULL or NORMAL", c.Synchronous))
	}
	// The hub's own refusals, named by their flags.
	var se *hub.SettingError
	for _, err := range unjoin(c.Settings.Validate()) {
		if errors.As(err, &se) {
			err = fmt.Errorf("--%s %s: give %s", se.Name, se.Got, se.Want)
		}
		errs = append(errs, err)
	}
	for i, o := range c.Origins {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		if u, err := url.Parse(o); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("--origin %q: give scheme and host, like https://claude.ai", o))
		}
		c.Origins[i] = o
	}
	for i, p := range c.Proxies {
		p = strings.TrimSpace(p)
		if _, err := ParseProxy(p); err != nil {
			errs = append(errs, fmt.Errorf("--proxy %q: give an address or a CIDR prefix, like 10.0.0.5 or 10.0.0.0/24", p))
		}
		c.Proxies[i] = p
	}
	return errors.Join(errs...)
}

// ParseProxy reads a --proxy value: an address, or a CIDR prefix.
func ParseProxy(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.ParsePrefix(s)
}

// TrustedProxies is Proxies parsed (after Validate).
func (c Config) TrustedProxies() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range c.Proxies {
		if pre, err := ParseProxy(p); err == nil {
			out = append(out, pre.Masked())
		}
	}
	return out
}

// String is the configuration for the start-up log, with a database URL's
// password hidden.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "addr=%s database=%s base_url=%q log_format=%s synchronous=%s origins=%v private_hosts=%v proxies=%v",
		c.Addr, redactURL(c.Database), c.BaseURL, c.LogFormat, c.Synchronous, c.Origins, c.PrivateHosts, c.Proxies)
	for _, t := range hub.Tunables {
		fmt.Fprintf(&b, " %s=%s", strings.ReplaceAll(t.Name, "-", "_"), t.Value(&c.Settings))
	}
	return b.String()
}

// unjoin is the errors errors.Join joined (err itself when it joined
// none; nothing for nil).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// redactURL hides the password of a database URL.
func redactURL(database string) string {
	u, err := url.Parse(database)
	if err != nil || u.User == nil {
		return database
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	return u.String()
}
