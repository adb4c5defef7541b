package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestReportAfterRedaction: a call whose data was deleted (DELETE /v1/calls/{id}) takes
// none from a worker's report that comes after: a late ended report's transcript, its
// analysis and a recording report leave the record redacted; the metrics and usage
// still count.
func TestReportAfterRedaction(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "redacted.db")
	now := time.Now().UTC().Truncate(time.Millisecond)
	svc, err := session.New(st, deletingRooms{}, session.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	acct := ident.New("acct")
	answered := now.Add(-time.Minute)
	ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "audio",
		Status: session.StatusEnded, CreatedAt: answered, AnsweredAt: &answered, EndedAt: &now, AssistantSeenAt: &answered}
	c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Inbound, Media: "audio", From: "+15550100009",
		Status: call.StatusActive, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: answered, AnsweredAt: &answered}
	c.Record(true)
	c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, now, func() string { return ident.New("evt") })
	c.Redact(now)
	ses.CallID = c.ID
	if err := st.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	turns := 3
	for _, rep := range []persona.Report{
		{Kind: persona.ReportEnded, CallID: c.ID, SessionID: ses.ID, At: now, EndReason: persona.EndCallerHangup,
			Transcript: []persona.Turn{{Speaker: persona.SpeakerCaller, Text: "my number is 555 010 0009"}},
			Metrics:    persona.Metrics{Turns: &turns}, Analysis: &persona.AnalysisResult{Status: persona.AnalysisPending}},
		{Kind: persona.ReportAnalysis, CallID: c.ID, SessionID: ses.ID, At: now,
			Analysis: &persona.AnalysisResult{Status: persona.AnalysisCompleted, Summary: "Ada wants a call back"}},
		{Kind: persona.ReportRecording, CallID: c.ID, SessionID: ses.ID, At: now,
			Recording: &persona.RecordingResult{Key: acct + "/" + c.ID + ".ogg", Format: "ogg_opus", SizeBytes: 10}},
	} {
		if err := svc.HandleReport(ctx, rep); err != nil {
			t.Fatalf("report %s: %v", rep.Kind, err)
		}
		if got, err := st.GetCall(ctx, c.ID); err != nil || got.Transcript != nil || got.Recording.Key != "" ||
			got.Analysis != nil && got.Analysis.Summary != "" {
			t.Errorf("redacted call after the %s report = %+v (%v), want nothing the report brought", rep.Kind, got, err)
		}
	}
	got, err := st.GetCall(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Transcript != nil || got.From != "" || got.RecordingStatus() != call.RecordingDeleted || got.Recording.Key != "" {
		t.Errorf("redacted call after late reports = %+v, want no transcript, number or recording", got)
	}
	if got.Analysis != nil && got.Analysis.Summary != "" {
		t.Errorf("redacted call's analysis after a late report = %+v, want its status only", got.Analysis)
	}
	if got.Metrics == nil || got.Metrics.Turns == nil || *got.Metrics.Turns != 3 || !got.Redacted() {
		t.Errorf("redacted call's metrics = %+v (redacted %v), want the report's", got.Metrics, got.Redacted())
	}
}
