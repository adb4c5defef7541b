package assistant_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// TestAnalysisRules: a draft's analysis asks for something, its schema is a bounded JSON
// Schema object (compacted), its criteria bounded; null turns it off.
func TestAnalysisRules(t *testing.T) {
	svc, _ := newService(t)
	acct := ident.New("acct")
	with := func(a assistant.Analysis) assistant.Fields {
		f := assistant.Fields{Name: ptr("Ada"), Calls: &assistant.CallFields{Analysis: &a}}
		return f
	}
	big := json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", assistant.MaxAnalysisSchemaBytes) + `"}`)
	for _, tc := range []struct {
		name        string
		fields      assistant.Fields
		code, param string
	}{
		{"a summary", with(assistant.Analysis{Summary: true}), "", ""},
		{"structured data", with(assistant.Analysis{StructuredData: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)}), "", ""},
		{"success criteria", with(assistant.Analysis{SuccessCriteria: "The caller booked a slot."}), "", ""},
		{"nothing asked", with(assistant.Analysis{}), apierr.CodeParameterInvalid, "analysis"},
		{"blank criteria alone", with(assistant.Analysis{SuccessCriteria: "  "}), apierr.CodeParameterInvalid, "analysis"},
		{"schema not an object", with(assistant.Analysis{StructuredData: json.RawMessage(`{"type":"string"}`)}), apierr.CodeParameterInvalid, "analysis.structured_data"},
		{"schema invalid", with(assistant.Analysis{StructuredData: json.RawMessage(`{"type":"object","required":3}`)}), apierr.CodeParameterInvalid, "analysis.structured_data"},
		{"schema with an external ref", with(assistant.Analysis{StructuredData: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"http://169.254.169.254/x"}}}`)}), apierr.CodeParameterInvalid, "analysis.structured_data"},
		{"schema too big", with(assistant.Analysis{StructuredData: big}), apierr.CodeParameterInvalid, "analysis.structured_data"},
		{"criteria at the limit", with(assistant.Analysis{SuccessCriteria: strings.Repeat("é", assistant.MaxAnalysisSuccessCriteria)}), "", ""},
		{"criteria past the limit", with(assistant.Analysis{SuccessCriteria: strings.Repeat("c", assistant.MaxAnalysisSuccessCriteria+1)}), apierr.CodeParameterInvalid, "analysis.success_criteria"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Create(context.Background(), acct, tc.fields)
			wantCode(t, "Create", err, tc.code, tc.param)
		})
	}
}

// TestAnalysisTravelsWithTheDraft: the analysis is published into the version, restored
// and duplicated with the draft, and null turns it off.
func TestAnalysisTravelsWithTheDraft(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	acct := ident.New("acct")
	want := assistant.Analysis{Summary: true, StructuredData: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`),
		SuccessCriteria: "The caller learnt where the order is."}
	f := complete("Ada")
	f.Calls = &assistant.CallFields{Analysis: &assistant.Analysis{Summary: true, StructuredData: json.RawMessage("{\n \"type\": \"object\", \"properties\": {\"order_id\": {\"type\": \"string\"}}\n}"),
		SuccessCriteria: want.SuccessCriteria}}
	a, err := svc.Create(ctx, acct, f)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got *assistant.Analysis) {
		t.Helper()
		if got == nil || got.Summary != want.Summary || string(got.StructuredData) != string(want.StructuredData) || got.SuccessCriteria != want.SuccessCriteria {
			t.Errorf("%s: analysis %+v, want %+v (schema compacted)", what, got, want)
		}
	}
	same("draft", a.Draft.Analysis)
	a, err = svc.Publish(ctx, acct, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	v1 := a.Versions[0]
	same("version", v1.Analysis)
	a, err = svc.Update(ctx, acct, a.ID, assistant.Fields{Calls: &assistant.CallFields{ClearAnalysis: true}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Draft.Analysis != nil {
		t.Fatalf("null left the draft's analysis: %+v", a.Draft.Analysis)
	}
	a, err = svc.Publish(ctx, acct, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Versions[1].Analysis != nil {
		t.Errorf("version 2 has an analysis: %+v", a.Versions[1].Analysis)
	}
	same("version 1 kept", a.Versions[0].Analysis)
	a, err = svc.RestoreDraft(ctx, acct, a.ID, v1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same("restored draft", a.Draft.Analysis)
	dup, err := svc.Duplicate(ctx, acct, a.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	same("duplicate's draft", dup.Draft.Analysis)
}
