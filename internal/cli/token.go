package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

func runToken(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "token", args, []verb{
		{"mint", "mint an agent's token (plv_…) or a person's API token (plu_…)", tokenMint},
		{"list", "list a person's tokens, without their secrets", tokenList},
		{"revoke", "revoke a token by its id", tokenRevoke},
	})
}

// parseExpiry reads "30d", "12h", "90m" or any Go duration; "" is never.
func parseExpiry(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseInt(n, 10, 64)
		if err == nil && days > 0 {
			return hub.Days(days), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("--expires %q: give a positive duration like 30d, 12h or 90m", s)
}

// tokenMint: palaver token mint --user OWNER --agent SLUG [--scope …]
// [--expires 30d] [--name NAME]. The token is printed alone on the last
// line of stdout and nowhere else.
func tokenMint(ctx context.Context, e *env, args []string) error {
	var owner, slug, scope, expires, name string
	var person bool
	return adminCommand(ctx, e, args, "token mint --user OWNER (--agent SLUG [--scope msg:read,msg:write,contacts:read] | --owner) [--expires 30d] [--name NAME]", 0,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &owner, "user", "OWNER", "the agent's owner")
			fs.StringVar(&slug, "agent", "", "`SLUG`: the agent's slug, for an agent token (plv_…) (required unless --owner)")
			fs.BoolVar(&person, "owner", false, "mint the person's own API token (plu_…) for the REST API instead")
			fs.StringVar(&scope, "scope", strings.Join(hub.AllScopes, ","), "comma-separated scopes")
			fs.StringVar(&expires, "expires", "", "lifetime, like 30d or 12h (default: never expires)")
			fs.StringVar(&name, "name", "", "a label for the token, like laptop")
		},
		func(a *admin) error {
			if slug != "" && person {
				fmt.Fprintln(e.stderr, "palaver token mint: give --agent SLUG for an agent's token or --owner for the person's own API token, not both")
				return errUsage
			}
			ttl, err := parseExpiry(expires)
			if err != nil {
				return err
			}
			if person {
				t, secret, err := a.hub.MintUserToken(ctx, owner, name, ttl)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "minted %s, %s's API token for /api/v1 and the rooms profile's user side at /mcp/rooms/; it is shown only once:\n%s\n", t.ID, owner, secret)
				return nil
			}
			scopes, err := hub.ParseScopes(scope)
			if err != nil {
				return err
			}
			t, secret, err := a.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug, Scopes: scopes, Expires: ttl, Name: name})
			if err != nil {
				return err
			}
			exp := "never expires"
			if !t.ExpiresAt.IsZero() {
				exp = "expires " + t.ExpiresAt.Format(time.RFC3339)
			}
			fmt.Fprintf(e.stdout, "minted %s for %s/%s (scopes %s, %s); it is shown only once:\n%s\n",
				t.ID, owner, slug, strings.Join(t.Scopes, ","), exp, secret)
			return nil
		})
}

// tokenList: palaver token list --user OWNER [--agent SLUG].
func tokenList(ctx context.Context, e *env, args []string) error {
	var owner, slug string
	return adminCommand(ctx, e, args, "token list --user OWNER [--agent SLUG]", 0,
		func(fs *flag.FlagSet) {
			requiredFlag(fs, &owner, "user", "OWNER", "whose tokens")
			fs.StringVar(&slug, "agent", "", "only this agent's tokens")
		},
		func(a *admin) error {
			ts, err := a.hub.Tokens(ctx, owner, slug)
			if err != nil {
				return err
			}
			agents, err := a.hub.Agents(ctx, owner, true)
			if err != nil {
				return err
			}
			handles := map[string]string{}
			for _, ag := range agents {
				handles[ag.ID] = ag.Handle()
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tAGENT\tNAME\tSCOPES\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, handles[t.AgentID], t.Name, strings.Join(t.Scopes, ","),
					day(t.CreatedAt), day(t.LastUsedAt), day(t.ExpiresAt), day(t.RevokedAt))
			}
			return tw.Flush()
		})
}

// tokenRevoke: palaver token revoke TOKEN_ID.
func tokenRevoke(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "token revoke TOKEN_ID", 1, nil, func(a *admin) error {
		t, err := a.hub.RevokeToken(ctx, a.pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked %s: its next request gets 401\n", t.ID)
		return nil
	})
}

// day formats a time for tables: "-" when unset.
func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}
