package storetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// versionVariables: a version stores the placeholder names its text uses, and a
// malformed placeholder is refused before anything is written.
func versionVariables(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := assistant.Service{Store: s, Now: time.Now}
	f := completeFields("Ada")
	f.Greeting = ptr("Hello {{caller_name|there}}, this is {{company}}.")
	f.SystemPrompt = ptr("You answer for {{company}}. The caller is {{ caller_name }}.")
	a, err := svc.Create(ctx(t), acct.ID, f)
	if err != nil {
		t.Fatal(err)
	}
	if a, err = svc.Publish(ctx(t), acct.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	v, err := s.GetVersion(ctx(t), a.ActiveVersionID)
	if want := []string{"caller_name", "company"}; err != nil || !slices.Equal(v.Variables, want) {
		t.Errorf("GetVersion(%s).Variables = %q, %v; want %q", a.ActiveVersionID, v.Variables, err, want)
	}
	_, err = svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Greeting: ptr("Hello {{caller name}}")})
	if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeParameterInvalid || e.Param != "greeting" {
		t.Errorf("Update(malformed greeting) err = %v, want parameter_invalid on greeting", err)
	}
	got, err := s.GetAssistant(ctx(t), a.ID)
	if err != nil || got.Draft.Greeting != *f.Greeting {
		t.Errorf("draft greeting after the refused update = %q, %v; want it unchanged", got.Draft.Greeting, err)
	}
}

// lineVariables: a line's default variables are stored, replaced whole and cleared.
func lineVariables(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	_, lines := services(s)
	l, err := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100007", "")
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"company": "Acme", "topic": "billing"}
	if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{Variables: &set}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetLine(ctx(t), l.ID)
	if err != nil || !maps.Equal(got.Variables, set) {
		t.Fatalf("GetLine.Variables = %v, %v; want %v", got.Variables, err, set)
	}
	replaced := map[string]string{"company": "Acme Dental"}
	if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{Variables: &replaced}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LineByHandle(ctx(t), sim.Name, l.Handle); !maps.Equal(got.Variables, replaced) {
		t.Errorf("LineByHandle.Variables = %v, want %v (replaced whole)", got.Variables, replaced)
	}
	bad := map[string]string{"first name": "x"}
	if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{Variables: &bad}); !apierr.Is(err, apierr.CodeParameterInvalid) {
		t.Errorf("Update(bad name) err = %v, want parameter_invalid", err)
	}
	empty := map[string]string{}
	if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{Variables: &empty}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetLine(ctx(t), l.ID); len(got.Variables) != 0 {
		t.Errorf("GetLine.Variables after clearing = %v, want none", got.Variables)
	}
}

// decisionVariables: an assistant answer keeps its variables, and the line's assistant
// recorded at ring time reads back.
func decisionVariables(t *testing.T, s decision.Store) {
	r := pendingDecision()
	r.AssistantID = "asst_1"
	if err := s.CreateDecision(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"caller_name": "Ada", "note": "line one\nline two"}
	got, won, err := s.Decide(ctx(t), r.CallID, decision.Assistant, decision.SourceWebhook, vars, time.Now())
	if err != nil || !won || got.Decision != decision.Assistant || !maps.Equal(got.Variables, vars) {
		t.Fatalf("Decide(assistant) = %+v, %v, %v", got, won, err)
	}
	got, err = s.GetDecision(ctx(t), r.CallID)
	if err != nil || got.AssistantID != "asst_1" || !maps.Equal(got.Variables, vars) {
		t.Errorf("GetDecision = %+v, %v; want assistant asst_1 and variables %v", got, err, vars)
	}
}

// callVariables: the call record keeps the variables it was rendered with.
func callVariables(t *testing.T, s SessionStore) {
	ses, c := newSessionPair(ident.New("acct"))
	c.Variables = map[string]string{"caller_name": "Zoë", "company": ""}
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCall(ctx(t), c.ID)
	if err != nil || !maps.Equal(got.Variables, c.Variables) {
		t.Errorf("GetCall.Variables = %v, %v; want %v", got.Variables, err, c.Variables)
	}
}
