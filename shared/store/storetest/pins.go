package storetest

import (
	"reflect"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// pinCases: a line's pinned version (version_id) and a draft restored from a version.
var pinCases = map[string]func(*testing.T, Store){
	"a line pins a version of its assistant, and reads it back": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		assistants, lines := services(s)
		l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100301", "")
		a, _ := assistants.Create(ctx(t), acct.ID, completeFields("Ada"))
		v1, err := assistants.Publish(ctx(t), acct.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := assistants.Publish(ctx(t), acct.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		pin := v1.ActiveVersionID
		got, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{AssistantID: &a.ID, VersionID: &pin})
		if err != nil || got.VersionID != pin || got.AssistantID != a.ID {
			t.Fatalf("Update(assign + pin) = %+v, %v; want version %s", got, err, pin)
		}
		stored, err := s.GetLine(ctx(t), l.ID)
		if err != nil || stored.VersionID != pin {
			t.Fatalf("GetLine = version %q, %v; want %s", stored.VersionID, err, pin)
		}
		byHandle, _ := s.LineByHandle(ctx(t), sim.Name, "+15550100301")
		if byHandle.VersionID != pin {
			t.Errorf("LineByHandle version = %q, want %s", byHandle.VersionID, pin)
		}
		// A PATCH of something else keeps the pin.
		name := "Front desk"
		if got, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{Name: &name}); err != nil || got.VersionID != pin {
			t.Errorf("Update(name) = version %q, %v; want the pin kept", got.VersionID, err)
		}
		if got, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{UnpinVersion: true}); err != nil || got.VersionID != "" {
			t.Errorf("Update(unpin) = version %q, %v; want none", got.VersionID, err)
		}
		if got, _ := s.GetLine(ctx(t), l.ID); got.VersionID != "" || got.AssistantID != a.ID {
			t.Errorf("after unpin, stored line = %+v, want the assistant without a pin", got)
		}
	},
	"a pin must name a version of the line's assistant in the account": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		otherAcct, _ := newAccount(t, s)
		assistants, lines := services(s)
		l, _ := lines.Provision(ctx(t), acct.ID, sim.Name, "+15550100302", "")
		a, _ := assistants.Create(ctx(t), acct.ID, completeFields("A"))
		b, _ := assistants.Create(ctx(t), acct.ID, completeFields("B"))
		foreign, _ := assistants.Create(ctx(t), otherAcct.ID, completeFields("Foreign"))
		a, _ = assistants.Publish(ctx(t), acct.ID, a.ID)
		b, _ = assistants.Publish(ctx(t), acct.ID, b.ID)
		foreign, _ = assistants.Publish(ctx(t), otherAcct.ID, foreign.ID)

		pin := a.ActiveVersionID
		if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{VersionID: &pin}); !apierr.Is(err, apierr.CodeParameterInvalid) {
			t.Errorf("pin on a line without an assistant: err = %v, want parameter_invalid", err)
		}
		if _, err := lines.Assign(ctx(t), acct.ID, l.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name    string
			version string
			code    string
		}{
			{"another assistant's version", b.ActiveVersionID, apierr.CodeParameterInvalid},
			{"another account's version", foreign.ActiveVersionID, apierr.CodeResourceNotFound},
			{"an unknown version", "ver_01jd0000000000000000000000", apierr.CodeResourceNotFound},
		}
		for _, c := range cases {
			v := c.version
			_, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{VersionID: &v})
			if !apierr.Is(err, c.code) {
				t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
			}
			if e, ok := apierr.As(err); ok && e.Param != "version_id" {
				t.Errorf("%s: param = %q, want version_id", c.name, e.Param)
			}
		}
		if got, _ := s.GetLine(ctx(t), l.ID); got.VersionID != "" {
			t.Errorf("after refused pins, stored version = %q, want none", got.VersionID)
		}
		// Assigning another assistant drops a pin of the first one's version.
		if _, err := lines.Update(ctx(t), acct.ID, l.ID, line.Update{VersionID: &pin}); err != nil {
			t.Fatal(err)
		}
		if got, err := lines.Assign(ctx(t), acct.ID, l.ID, b.ID); err != nil || got.VersionID != "" {
			t.Errorf("Assign(other assistant) = version %q, %v; want the pin dropped", got.VersionID, err)
		}
	},
	"a draft is restored from a version": func(t *testing.T, s Store) {
		acct, _ := newAccount(t, s)
		assistants, _ := services(s)
		a, _ := assistants.Create(ctx(t), acct.ID, completeFields("Ada"))
		v1, err := assistants.Publish(ctx(t), acct.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		changed := "Good evening."
		model := "llama3.1:8b"
		if _, err := assistants.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Greeting: &changed, Model: &model}); err != nil {
			t.Fatal(err)
		}
		v2, err := assistants.Publish(ctx(t), acct.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := assistants.RestoreDraft(ctx(t), acct.ID, a.ID, v1.ActiveVersionID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Draft.Greeting != "Hello there." || got.Draft.Model != "" || got.ActiveVersionID != v2.ActiveVersionID || len(got.Versions) != 2 {
			t.Errorf("restored = draft %+v, active %s, %d versions; want version 1's draft, version 2 active, 2 versions",
				got.Draft, got.ActiveVersionID, len(got.Versions))
		}
		stored, _ := s.GetAssistant(ctx(t), a.ID)
		if !reflect.DeepEqual(stored.Draft, v1.Versions[0].Draft()) {
			t.Errorf("stored draft = %+v, want %+v", stored.Draft, v1.Versions[0].Draft())
		}
		other, _ := assistants.Create(ctx(t), acct.ID, completeFields("Other"))
		other, _ = assistants.Publish(ctx(t), acct.ID, other.ID)
		if _, err := assistants.RestoreDraft(ctx(t), acct.ID, a.ID, other.ActiveVersionID); !apierr.Is(err, apierr.CodeResourceNotFound) {
			t.Errorf("restore from another assistant's version: err = %v, want resource_not_found", err)
		}
		if _, err := assistants.RestoreDraft(ctx(t), acct.ID, a.ID, ""); !apierr.Is(err, apierr.CodeParameterMissing) {
			t.Errorf("restore without version_id: err = %v, want parameter_missing", err)
		}
		if _, err := assistants.Archive(ctx(t), acct.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := assistants.RestoreDraft(ctx(t), acct.ID, a.ID, v1.ActiveVersionID); !apierr.Is(err, apierr.CodeAssistantArchived) {
			t.Errorf("restore on an archived assistant: err = %v, want assistant_archived", err)
		}
	},
}
