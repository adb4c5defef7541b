package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/store"
)

// Dev lines every fresh local stack gets.
var devHandles = []string{"+15550100001", "+15550100002"}

// dev runs the local stack in the foreground until ctx ends (Ctrl-C).
func dev(ctx context.Context, args []string) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.StringVar(&cfg.Store, "store", cfg.Store, "sqlite or dynamodb")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := localSecrets(&cfg); err != nil {
		return err
	}
	log := slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	// The LiveKit SDK (sim parties, persona workers) logs warnings and up, into log; its
	// default writes every connection step to stderr.
	worker.SetSDKLogger(log)
	if err := startPprof(ctx, log); err != nil {
		return err
	}

	s, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	fresh, err := bootstrapDev(ctx, cfg, s, os.Stdout)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	cp, stopMedia, err := startMedia(ctx, cfg, s, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopMedia()
	if fresh != "" {
		if err := seedDevAssistant(ctx, cp, fresh, os.Stdout); err != nil {
			ln.Close()
			return err
		}
	}
	// bridgeline admin, run beside this process, opens the same store (stack.go).
	removeState, err := writeStackState(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer removeState()

	srv := newServer(cp.Handler(), defaultTimeouts)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("bridgeline: API on http://%s, sim caller page on http://%s/sim/ (Ctrl-C stops everything)\n", cfg.Addr, cfg.Addr)
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	fmt.Println("bridgeline: stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// devState remembers which account is the dev account across restarts.
type devState struct {
	AccountID string `json:"account_id"`
}

// localSecrets gives cfg the data folder's own LiveKit and persona report secrets where
// the environment set none (made on first start, never a default every copy of the
// project shares), then validates it: a public default set in the environment is
// refused before anything starts or is written.
func localSecrets(cfg *config.Config) error {
	for _, v := range []string{cfg.LiveKitSecret, cfg.PersonaReportSecret} {
		if v == config.PublicDevSecret || v == config.PublicDevReportSecret {
			return cfg.Validate()
		}
	}
	var err error
	if cfg.LiveKitSecret == "" {
		if cfg.LiveKitSecret, err = config.LocalLiveKitSecret(cfg.DataDir); err != nil {
			return err
		}
	}
	if cfg.PersonaReportSecret == "" {
		if cfg.PersonaReportSecret, err = config.LocalReportSecret(cfg.DataDir); err != nil {
			return err
		}
	}
	return cfg.Validate()
}

// bootstrapDev makes the dev account with its key and two sim lines on first start, and
// adds DEV_API_KEY to it when given. The key is printed only when it is made: only its
// hash is stored. It returns the account's id when it made the account ("" on a later
// start), for seedDevAssistant.
func bootstrapDev(ctx context.Context, cfg config.Config, s store.Store, out *os.File) (string, error) {
	// One state file per store: DynamoDB Local keeps its tables in memory, so its dev
	// account is made again on each start, without touching the SQLite one.
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return "", err
	}
	statePath := filepath.Join(cfg.DataDir, "dev-account.json")
	if cfg.Store != "sqlite" {
		statePath = filepath.Join(cfg.DataDir, "dev-account-"+cfg.Store+".json")
	}
	now := time.Now().UTC()
	var st devState
	if b, err := os.ReadFile(statePath); err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			return "", fmt.Errorf("read %s: %w", statePath, err)
		}
	}
	if st.AccountID != "" {
		_, err := s.GetAccount(ctx, st.AccountID)
		switch {
		case errors.Is(err, apierr.ErrNotFound):
			fmt.Fprintf(out, "bridgeline: dev account %s is gone from the store; making a new one\n", st.AccountID)
			st = devState{}
		case err != nil:
			return "", fmt.Errorf("dev account %s from %s: %w", st.AccountID, statePath, err)
		}
	}
	if st.AccountID != "" {
		if cfg.DevAPIKey != "" {
			return "", ensureKey(ctx, s, st.AccountID, cfg.DevAPIKey, now)
		}
		fmt.Fprintf(out, "bridgeline: dev account %s (its key was printed at first start; set DEV_API_KEY or run `bridgeline admin key create --account %s`)\n", st.AccountID, st.AccountID)
		return "", nil
	}
	svcAcct := account.Service{Store: s, Now: time.Now}
	var a account.Account
	var err error
	text := cfg.DevAPIKey
	if text != "" {
		a, err = svcAcct.CreateWithKey(ctx, "Dev", text)
	} else {
		a, text, err = svcAcct.Create(ctx, "Dev", false)
	}
	if err != nil {
		return "", fmt.Errorf("create dev account: %w", err)
	}
	lines := line.Service{Store: s, Assistants: s, Now: time.Now}
	for i, h := range devHandles {
		if _, err := lines.Provision(ctx, a.ID, sim.Name, h, fmt.Sprintf("Dev line %d", i+1)); err != nil && !apierr.Is(err, apierr.CodeConflict) {
			return "", fmt.Errorf("provision dev line %s: %w", h, err)
		}
	}
	b, _ := json.Marshal(devState{AccountID: a.ID})
	if err := os.WriteFile(statePath, b, 0o600); err != nil {
		return "", err
	}
	fmt.Fprintf(out, "bridgeline: created dev account %s with sim lines %v\nbridgeline: dev API key (shown once): %s\n", a.ID, devHandles, text)
	return a.ID, nil
}

// ensureKey adds a key's hash to an account unless it is there already.
func ensureKey(ctx context.Context, s store.Store, accountID, text string, now time.Time) error {
	k, _, err := s.KeyAndAccount(ctx, account.HashKey(text))
	switch {
	case err == nil && k.AccountID != accountID:
		return fmt.Errorf("DEV_API_KEY belongs to another account")
	case err == nil && k.Revoked():
		return fmt.Errorf("DEV_API_KEY was revoked: set another")
	case err == nil:
		return nil
	case !errors.Is(err, apierr.ErrNotFound):
		return err
	}
	return s.AddKey(ctx, account.KeyFromText(accountID, text, now))
}

// The assistant a fresh dev account's lines start with.
const (
	devAssistantName     = "Dev assistant"
	devAssistantPrompt   = "You answer the dev lines of a local Bridgeline stack. Answer in one or two short sentences."
	devAssistantGreeting = "Hello, this is the Bridgeline dev line. How can I help?"
	devAssistantAvatar   = "ava_iris"
)

// seedDevAssistant gives a fresh dev account a published assistant and assigns it to
// every dev line. The lines start in inbound_mode assistant, so without one the listing
// would promise an assistant and every call would end no_assistant; with one, a call to
// either line is answered from the first start (the sim caller page, a SIP phone), and
// assigning your own assistant replaces it. It runs once the control plane is built, so
// the assistant's tool secret is sealed as the API's are.
func seedDevAssistant(ctx context.Context, cp *controlplane.ControlPlane, accountID string, out *os.File) error {
	name, prompt, greeting, avatar := devAssistantName, devAssistantPrompt, devAssistantGreeting, devAssistantAvatar
	a, err := cp.Assistants.Create(ctx, accountID, assistant.Fields{Name: &name, SystemPrompt: &prompt, Greeting: &greeting, AvatarID: &avatar})
	if err != nil {
		return fmt.Errorf("create the dev assistant: %w", err)
	}
	if _, err := cp.Assistants.Publish(ctx, accountID, a.ID); err != nil {
		return fmt.Errorf("publish the dev assistant: %w", err)
	}
	ls, err := cp.Lines.List(ctx, accountID, listing.Query{Limit: 100})
	if err != nil {
		return fmt.Errorf("list the dev lines: %w", err)
	}
	for _, l := range ls {
		if !slices.Contains(devHandles, l.Handle) {
			continue
		}
		if _, err := cp.Lines.Assign(ctx, accountID, l.ID, a.ID); err != nil {
			return fmt.Errorf("assign the dev assistant to %s: %w", l.Handle, err)
		}
	}
	fmt.Fprintf(out, "bridgeline: the dev lines are answered by %q (%s); assign your own assistant to a line to replace it\n", name, a.ID)
	return nil
}
