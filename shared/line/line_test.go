package line_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

func ptr[T any](v T) *T { return &v }

// fixture is an account with a line and assistants in every state, on SQLite.
type fixture struct {
	lines                               *line.Service
	acct                                string
	line                                line.Line
	published, draft, archived, foreign assistant.Assistant
	v1, v2                              assistant.Version // the published one's
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lines.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	asst := &assistant.Service{Store: st, Now: time.Now}
	f := &fixture{lines: &line.Service{Store: st, Assistants: st, Now: time.Now}, acct: ident.New("acct")}
	newAssistant := func(acct, name string, publish int, archive bool) assistant.Assistant {
		a, err := asst.Create(ctx, acct, assistant.Fields{Name: ptr(name), SystemPrompt: ptr("Be kind."),
			Greeting: ptr("Hello."), AvatarID: ptr(persona.Avatars[0].ID)})
		if err != nil {
			t.Fatal(err)
		}
		for range publish {
			if a, err = asst.Publish(ctx, acct, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		if archive {
			if a, err = asst.Archive(ctx, acct, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	f.published = newAssistant(f.acct, "Published", 2, false)
	f.v1, f.v2 = f.published.Versions[0], f.published.Versions[1]
	f.draft = newAssistant(f.acct, "Draft", 0, false)
	f.archived = newAssistant(f.acct, "Archived", 1, true)
	f.foreign = newAssistant(ident.New("acct"), "Another account's", 1, false)
	if f.line, err = f.lines.Provision(ctx, f.acct, "", "+15550100001", "Front desk"); err != nil {
		t.Fatal(err)
	}
	return f
}

func code(err error) (string, string) {
	if e, ok := apierr.As(err); ok {
		return e.Code, e.Param
	}
	if err != nil {
		return "internal: " + err.Error(), ""
	}
	return "", ""
}

// TestProvision: a line is on the sim unless told otherwise, answers with its assistant
// (none yet) and a 10 s decision timeout that declines; a handle is provisioned once.
func TestProvision(t *testing.T) {
	f := newFixture(t)
	l := f.line
	if l.Platform != sim.Name || l.InboundMode != line.ModeAssistant || l.DecisionTimeoutSeconds != line.DefaultDecisionTimeout ||
		l.OnDecisionTimeout != line.TimeoutDecline || l.AssistantID != "" {
		t.Errorf("Provision = %+v, want a sim line in assistant mode, 10 s, decline, no assistant", l)
	}
	ctx := context.Background()
	if _, err := f.lines.Provision(ctx, f.acct, sim.Name, l.Handle, ""); !apierr.Is(err, apierr.CodeConflict) {
		t.Errorf("Provision of a provisioned handle = %v, want conflict", err)
	}
	if _, err := f.lines.Provision(ctx, f.acct, sim.Name, "  ", ""); !apierr.Is(err, apierr.CodeParameterMissing) {
		t.Errorf("Provision without a handle = %v, want parameter_missing", err)
	}
}

// TestUpdateRules: what a PATCH or an assignment may do to a line, and what it leaves.
func TestUpdateRules(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other, n := ident.New("acct"), 0
	for _, tc := range []struct {
		name        string
		account     string       // "" is the line's
		before      *line.Update // applied first, on its own
		update      line.Update
		code, param string
		check       func(line.Line) bool // of the line after a good update
	}{
		{name: "name", update: line.Update{Name: ptr("Sales")}, check: func(l line.Line) bool { return l.Name == "Sales" }},
		{name: "name past 200", update: line.Update{Name: ptr(strings.Repeat("n", 201))}, code: apierr.CodeParameterInvalid, param: "name"},
		{name: "customer_decides", update: line.Update{InboundMode: ptr(line.ModeCustomerDecides)},
			check: func(l line.Line) bool { return l.InboundMode == line.ModeCustomerDecides }},
		{name: "unknown mode", update: line.Update{InboundMode: ptr("robot")}, code: apierr.CodeParameterInvalid, param: "inbound_mode"},
		{name: "decision timeout at the bounds", update: line.Update{DecisionTimeoutSeconds: ptr(line.MaxDecisionTimeout)},
			check: func(l line.Line) bool { return l.DecisionTimeoutSeconds == line.MaxDecisionTimeout }},
		{name: "decision timeout under", update: line.Update{DecisionTimeoutSeconds: ptr(line.MinDecisionTimeout - 1)}, code: apierr.CodeParameterInvalid, param: "decision_timeout_seconds"},
		{name: "decision timeout over", update: line.Update{DecisionTimeoutSeconds: ptr(line.MaxDecisionTimeout + 1)}, code: apierr.CodeParameterInvalid, param: "decision_timeout_seconds"},
		{name: "unknown timeout action", update: line.Update{OnDecisionTimeout: ptr("hang_up")}, code: apierr.CodeParameterInvalid, param: "on_decision_timeout"},
		{name: "assign a published assistant", update: line.Update{AssistantID: ptr(f.published.ID)},
			check: func(l line.Line) bool { return l.AssistantID == f.published.ID && l.VersionID == "" }},
		{name: "assign one never published", update: line.Update{AssistantID: ptr(f.draft.ID)}, code: apierr.CodeAssistantNotPublished, param: "assistant_id"},
		{name: "assign an archived one", update: line.Update{AssistantID: ptr(f.archived.ID)}, code: apierr.CodeAssistantArchived, param: "assistant_id"},
		{name: "assign another account's", update: line.Update{AssistantID: ptr(f.foreign.ID)}, code: apierr.CodeResourceNotFound, param: "assistant_id"},
		{name: "assign an empty id", update: line.Update{AssistantID: ptr("")}, code: apierr.CodeParameterInvalid, param: "assistant_id"},
		{name: "assign and pin version 1", update: line.Update{AssistantID: ptr(f.published.ID), VersionID: ptr(f.v1.ID)},
			check: func(l line.Line) bool { return l.AssistantID == f.published.ID && l.VersionID == f.v1.ID }},
		{name: "pin with no assistant", update: line.Update{VersionID: ptr(f.v1.ID)}, code: apierr.CodeParameterInvalid, param: "version_id"},
		{name: "pin another assistant's version", before: &line.Update{AssistantID: ptr(f.published.ID)},
			update: line.Update{VersionID: ptr(f.archived.Versions[0].ID)}, code: apierr.CodeParameterInvalid, param: "version_id"},
		{name: "pin another account's version", before: &line.Update{AssistantID: ptr(f.published.ID)},
			update: line.Update{VersionID: ptr(f.foreign.Versions[0].ID)}, code: apierr.CodeResourceNotFound, param: "version_id"},
		{name: "pin while unassigning", update: line.Update{UnassignAssistant: true, VersionID: ptr(f.v1.ID)}, code: apierr.CodeParameterInvalid, param: "version_id"},
		{name: "reassigning unpins", before: &line.Update{AssistantID: ptr(f.published.ID), VersionID: ptr(f.v1.ID)},
			update: line.Update{AssistantID: ptr(f.published.ID)}, check: func(l line.Line) bool { return l.VersionID == "" }},
		{name: "unassigning unpins", before: &line.Update{AssistantID: ptr(f.published.ID), VersionID: ptr(f.v2.ID)},
			update: line.Update{UnassignAssistant: true}, check: func(l line.Line) bool { return l.AssistantID == "" && l.VersionID == "" }},
		{name: "another account's line", account: other, update: line.Update{Name: ptr("Mine")}, code: apierr.CodeResourceNotFound, param: "id"},
	} {
		n++
		t.Run(tc.name, func(t *testing.T) {
			l, err := f.lines.Provision(ctx, f.acct, sim.Name, fmt.Sprintf("+1555020%04d", n), "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				if _, err := f.lines.Update(ctx, f.acct, l.ID, *tc.before); err != nil {
					t.Fatalf("before: %v", err)
				}
			}
			acct := tc.account
			if acct == "" {
				acct = f.acct
			}
			got, err := f.lines.Update(ctx, acct, l.ID, tc.update)
			if c, p := code(err); c != tc.code || p != tc.param {
				t.Fatalf("Update = %v (%s on %q), want %q on %q", err, c, p, tc.code, tc.param)
			}
			if err != nil {
				if after, _ := f.lines.Get(ctx, f.acct, l.ID); after.Revision != l.Revision+map[bool]int64{true: 1, false: 0}[tc.before != nil] {
					t.Errorf("a refused update wrote the line: revision %d", after.Revision)
				}
				return
			}
			if !tc.check(got) {
				t.Errorf("Update = %+v", got)
			}
			if stored, _ := f.lines.Get(ctx, f.acct, l.ID); stored.Revision != got.Revision || stored.AssistantID != got.AssistantID || stored.VersionID != got.VersionID {
				t.Errorf("stored %+v, returned %+v", stored, got)
			}
		})
	}
}
