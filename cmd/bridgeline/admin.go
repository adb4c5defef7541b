package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// admin runs operator commands against the same store the stack uses; they work while
// the stack runs (SQLite in WAL mode takes one writer at a time). Unless BRIDGELINE_STORE
// or --store chooses, the store is the running stack's (stack.go): beside `make
// run-dynamodb` that is its DynamoDB Local.
func admin(ctx context.Context, args []string) error {
	return adminTo(ctx, args, os.Stdout)
}

// adminCommand is one `bridgeline admin` command: its flags (each documented in its
// --help), the ones it requires, and a one-line summary for the command list.
type adminCommand struct {
	name       string // "key create"
	args       string // the usage after the name, e.g. "--account ACCT [--live]"
	summary    string
	flags      []string // the flags it takes besides --store
	required   []string
	positional string // a first argument standing for this flag ("account" for `account limits A`)
}

var adminCommands = []adminCommand{
	{name: "account create", args: "--name NAME [--live]", summary: `create an account and its first key; prints {"account_id", "api_key"}`,
		flags: []string{"name", "live"}, required: []string{"name"}},
	{name: "account limits", args: "ACCT [--max-concurrent-sessions N|default] [--daily-outbound-minutes N|default] [--allowed-destination-countries US,GB|none|default]",
		summary: "show or set the account's own limit of live sessions and its outbound policy (daily minutes, destination countries)",
		flags:   []string{"account", "max-concurrent-sessions", "daily-outbound-minutes", "allowed-destination-countries"}, required: []string{"account"}, positional: "account"},
	{name: "account retention", args: "ACCT [--days N|off]", summary: "show or set how many days the account's calls keep their numbers, transcripts and recordings (default: off, kept)",
		flags: []string{"account", "days"}, required: []string{"account"}, positional: "account"},
	{name: "account branding", args: "ACCT [--name NAME] [--color #rrggbb] [--logo FILE|none] [--support-url URL|none]",
		summary: "show or set what the join page and the connecting screen show: the account's name, brand colour, logo (PNG, JPEG or WebP) and support link",
		flags:   []string{"account", "name", "color", "logo", "support-url"}, required: []string{"account"}, positional: "account"},
	{name: "key create", args: "--account ACCT [--live]", summary: "add an API key to an account; prints it once",
		flags: []string{"account", "live"}, required: []string{"account"}},
	{name: "key list", args: "--account ACCT", summary: "the account's keys (ids, prefixes, last four; never the key)",
		flags: []string{"account"}, required: []string{"account"}},
	{name: "key revoke", args: "--account ACCT --key KEY", summary: "revoke a key (refused for the account's last key)",
		flags: []string{"account", "key"}, required: []string{"account", "key"}},
	{name: "line add", args: "--account ACCT --handle HANDLE [--platform sim] [--name NAME]", summary: "provision a line on a calling platform this deployment runs",
		flags: []string{"account", "handle", "platform", "name"}, required: []string{"account", "handle"}},
	{name: "line release", args: "--handle +E164", summary: "delete the SIP line holding a number, whichever account's, so that its owner can claim it (a squatted number); refused while a call on it is live",
		flags: []string{"handle"}, required: []string{"handle"}},
	{name: "indexes backfill", args: "", summary: "give records written before the list filter indexes their keys (DynamoDB)"},
	{name: "events replay", args: "--queue URL [--to URL] [--bus NAME]", summary: "put an AWS failure queue's events back on the event path (docs/deploy.md)",
		flags: []string{"queue", "to", "bus"}, required: []string{"queue"}}, // its own flag set: replay.go
}

// adminUsage lists the commands, as `bridgeline admin --help` prints it.
func adminUsage() string {
	var b strings.Builder
	b.WriteString("usage: bridgeline admin COMMAND [flags]   (COMMAND --help: its flags)\n")
	for _, c := range adminCommands {
		fmt.Fprintf(&b, "  %s\n      %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	b.WriteString("Every command but events replay takes --store sqlite|dynamodb (default: the running stack's store).\n")
	return b.String()
}

// adminPlatforms are the calling platforms whose lines `admin line add` provisions: the
// ones the local stack runs beside the control plane (media.go). A line on any other
// platform would answer every session 502 upstream_unavailable.
var adminPlatforms = []platform.Kind{sim.Kind{}}

func adminTo(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(out, adminUsage())
		if len(args) == 0 {
			return errors.New("admin: name a command")
		}
		return nil
	}
	if len(args) < 2 {
		return fmt.Errorf("admin: unknown command %q\n%s", args[0], adminUsage())
	}
	var cmd *adminCommand
	for i := range adminCommands {
		if adminCommands[i].name == args[0]+" "+args[1] {
			cmd = &adminCommands[i]
		}
	}
	if cmd == nil {
		return fmt.Errorf("admin: unknown command %q\n%s", args[0]+" "+args[1], adminUsage())
	}
	if cmd.name == "events replay" {
		return eventsReplay(ctx, args[2:], out) // AWS queues, no store
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("bridgeline admin "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help prints below
	storeName := fs.String("store", "", "the store: sqlite or dynamodb (default: the running stack's, else BRIDGELINE_STORE's)")
	all := map[string]func(){
		"name":    func() { fs.String("name", "", "the account's or the line's name") },
		"account": func() { fs.String("account", "", "the account's id (acct_...)") },
		"handle":  func() { fs.String("handle", "", "the line's handle on its platform, e.g. +15550100003 or sim:sales") },
		"platform": func() {
			fs.String("platform", sim.Name, "the line's calling platform, one this deployment runs: "+strings.Join(kindNames(adminPlatforms), ", "))
		},
		"live": func() {
			fs.Bool("live", false, "make an sk_live_ key instead of sk_test_ (live keys may use every calling platform)")
		},
		"key":   func() { fs.String("key", "", "the API key's id (key_...)") },
		"color": func() { fs.String("color", "", "the brand colour, #rrggbb") },
		"logo": func() {
			fs.String("logo", "", fmt.Sprintf("a logo file: PNG, JPEG or WebP, at most %d KiB, %d to %d pixels a side; none removes it",
				account.MaxLogoBytes>>10, account.MinLogoPixels, account.MaxLogoPixels))
		},
		"support-url": func() {
			fs.String("support-url", "", "the https page the join page links visitors to for help; none removes it")
		},
		"days": func() {
			fs.String("days", "", "days after a call's start when its data is deleted (0-3650), or off to keep it (the default)")
		},
		"max-concurrent-sessions": func() {
			fs.String("max-concurrent-sessions", "", "the account's own limit of live sessions (0-10000), or default for MAX_CONCURRENT_SESSIONS")
		},
		"daily-outbound-minutes": func() {
			fs.String("daily-outbound-minutes", "", "the account's own cap of outbound minutes (calls and transfers on real networks) per UTC day (0-1000000), or default")
		},
		"allowed-destination-countries": func() {
			fs.String("allowed-destination-countries", "", "the countries the account's lines may call unless a line sets its own: ISO codes (US,GB), none, or default (each line's own country)")
		},
	}
	for _, f := range cmd.flags {
		all[f]()
	}
	fs.Usage = func() {}
	flags := args[2:]
	if cmd.positional != "" && len(flags) > 0 && !strings.HasPrefix(flags[0], "-") {
		flags = append([]string{"--" + cmd.positional, flags[0]}, flags[1:]...) // `account limits ACCT --flag ...`
	}
	if err := fs.Parse(flags); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "usage: bridgeline admin %s %s\n  %s\n", cmd.name, cmd.args, cmd.summary)
		fs.SetOutput(out)
		fs.PrintDefaults()
		return nil
	} else if err != nil {
		return fmt.Errorf("admin %s: %w (--help lists its flags)", cmd.name, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("admin %s: unexpected argument %q (--help lists its flags)", cmd.name, fs.Arg(0))
	}
	str := func(name string) string {
		if f := fs.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	for _, r := range cmd.required {
		if strings.TrimSpace(str(r)) == "" {
			return fmt.Errorf("admin %s: --%s is required (usage: bridgeline admin %s %s)", cmd.name, r, cmd.name, cmd.args)
		}
	}
	acct, live := str("account"), str("live") == "true"
	if cmd.name == "line add" {
		if err := checkAdminPlatform(str("platform"), str("handle")); err != nil {
			return fmt.Errorf("admin line add: %w", err)
		}
	}
	if *storeName != "" {
		cfg.Store = *storeName
	}
	storeChosen := os.Getenv("BRIDGELINE_STORE") != ""
	fs.Visit(func(f *flag.Flag) { storeChosen = storeChosen || f.Name == "store" })
	adopted, err := adoptRunningStack(&cfg, storeChosen)
	if err != nil {
		return err
	}
	if adopted != "" {
		fmt.Fprintln(os.Stderr, "bridgeline admin: using", adopted)
	}
	if cfg.PersonaReportSecret == "" {
		// admin verifies no worker's report: a secret of this run only, never the data
		// folder's (which it must not make) nor a default.
		cfg.PersonaReportSecret = rand.Text() + rand.Text()
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	s, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	// json.Encoder ends every document with a newline, so output pipes and prints cleanly.
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	accountExists := func() error {
		if _, err := s.GetAccount(ctx, acct); errors.Is(err, apierr.ErrNotFound) {
			return fmt.Errorf("admin %s: no account %q", cmd.name, acct)
		} else if err != nil {
			return fmt.Errorf("admin %s: account %q: %w", cmd.name, acct, err)
		}
		return nil
	}
	switch cmd.name {
	case "account create":
		svc := account.Service{Store: s, Now: time.Now}
		a, key, err := svc.Create(ctx, str("name"), live)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]string{"account_id": a.ID, "api_key": key})
	case "key create":
		if err := accountExists(); err != nil {
			return err
		}
		text, k, err := account.NewKey(acct, live, time.Now().UTC())
		if err != nil {
			return err
		}
		if err := s.AddKey(ctx, k); err != nil {
			return err
		}
		return enc.Encode(map[string]string{"account_id": acct, "api_key": text})
	case "key list":
		if err := accountExists(); err != nil {
			return err
		}
		keys, err := s.ListKeys(ctx, acct)
		if err != nil {
			return fmt.Errorf("admin key list: %w", err)
		}
		out := make([]httpapi.KeyJSON, 0, len(keys))
		for _, k := range keys {
			out = append(out, httpapi.PresentKey(k))
		}
		return enc.Encode(out)
	case "key revoke":
		// The same store call as DELETE /v1/api_keys/{id}: idempotent, never the last key.
		k, err := s.RevokeKey(ctx, acct, str("key"), time.Now())
		if err != nil {
			return fmt.Errorf("admin key revoke: %w", err)
		}
		return enc.Encode(map[string]any{"account_id": k.AccountID, "key_id": k.ID, "revoked_at": k.RevokedAt})
	case "account limits":
		return accountLimits(ctx, s, cfg, acct, limitFlags{sessions: str("max-concurrent-sessions"),
			minutes: str("daily-outbound-minutes"), countries: str("allowed-destination-countries")}, enc)
	case "account retention":
		return accountRetention(ctx, s, cfg, acct, str("days"), enc)
	case "account branding":
		set := map[string]*string{}
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "account" && f.Name != "store" {
				v := f.Value.String()
				set[f.Name] = &v
			}
		})
		return accountBranding(ctx, s, cfg, acct, set, enc)
	case "line add":
		if err := accountExists(); err != nil {
			return err
		}
		svc := line.Service{Store: s, Assistants: s, Now: time.Now}
		l, err := svc.Provision(ctx, acct, str("platform"), str("handle"), str("name"))
		if err != nil {
			return err
		}
		return enc.Encode(map[string]string{"line_id": l.ID, "account_id": l.AccountID, "platform": l.Platform, "handle": l.Handle})
	case "line release":
		// No LiveKit here: the running stack's sweeper takes the number off the old trunk
		// in LiveKit at its next reconcile (30 s locally, a minute on AWS).
		svc := siptrunk.Service{Store: s, Lines: s, Calls: s, Now: time.Now}
		l, err := svc.ReleaseNumber(ctx, str("handle"))
		if err != nil {
			return fmt.Errorf("admin line release: %w", err)
		}
		return enc.Encode(map[string]string{"released_line_id": l.ID, "account_id": l.AccountID, "handle": l.Handle, "sip_trunk_id": l.SIPTrunkID})
	case "indexes backfill":
		return indexesBackfill(ctx, s, enc)
	}
	return fmt.Errorf("admin: command %q has no implementation", cmd.name)
}

// checkAdminPlatform refuses a line on a platform the deployment does not run, and a
// handle that platform does not dial.
func checkAdminPlatform(name, handle string) error {
	for _, k := range adminPlatforms {
		if k.Name() == name {
			if err := k.CheckHandle(handle); err != nil {
				return fmt.Errorf("--handle %q on the %s platform: %w", handle, name, err)
			}
			return nil
		}
	}
	return fmt.Errorf("--platform %q: this deployment runs no such calling platform (it runs: %s)", name, strings.Join(kindNames(adminPlatforms), ", "))
}

func kindNames(kinds []platform.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name()
	}
	return names
}

// indexesBackfill gives records written before the list filter indexes their keys
// (DynamoDB; SQLite's filter columns are computed from each row, so it has nothing to do).
func indexesBackfill(ctx context.Context, s any, enc *json.Encoder) error {
	b, ok := s.(interface {
		BackfillListKeys(ctx context.Context) (int, error)
	})
	if !ok {
		return enc.Encode(map[string]any{"updated": 0, "note": "nothing to backfill on this store"})
	}
	n, err := b.BackfillListKeys(ctx)
	if err != nil {
		return fmt.Errorf("admin indexes backfill: %w", err)
	}
	return enc.Encode(map[string]any{"updated": n})
}
