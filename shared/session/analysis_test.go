package session_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestCallAnalysis: the record's analysis from the worker's reports, on the real SQLite
// store: pending from the ended report, final from the analysis report with
// call.analyzed after call.ended, once; failed by the sweeper when no analysis came in
// time; failed when the worker's ended report never came and the version asks for an
// analysis; refused on a live call.
func TestCallAnalysis(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "analysis.db")
	now := time.Now().UTC().Truncate(time.Millisecond)
	const wait = 5 * time.Minute
	svc, err := session.New(st, deletingRooms{}, session.WithClock(func() time.Time { return now }), session.WithAnalysisWait(wait))
	if err != nil {
		t.Fatal(err)
	}
	acct := ident.New("acct")
	asst := assistant.Assistant{ID: ident.New("asst"), AccountID: acct, Name: "Ada", Status: assistant.StatusActive, Revision: 1,
		CreatedAt: now, UpdatedAt: now}
	if err := st.CreateAssistant(ctx, asst); err != nil {
		t.Fatal(err)
	}
	ver := assistant.Version{ID: ident.New("ver"), AssistantID: asst.ID, Number: 1, PublishedAt: now, Name: "Ada",
		CallSettings: assistant.CallSettings{Analysis: &assistant.Analysis{Summary: true}}}
	next := asst
	next.VersionCount, next.ActiveVersionID = 1, ver.ID
	if err := st.PublishVersion(ctx, next, ver); err != nil {
		t.Fatal(err)
	}
	turns := []persona.Turn{{Speaker: persona.SpeakerCaller, Text: "where is my order", StartMS: 800, EndMS: 1900}}

	// live saves an answered assistant call of the version, its worker seen.
	live := func(t *testing.T) call.Call {
		t.Helper()
		answered, seen := now.Add(-10*time.Second), now.Add(-9*time.Second)
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "audio",
			Status: session.StatusActive, CreatedAt: answered, AnsweredAt: &answered, AssistantSeenAt: &seen,
			AssistantID: asst.ID, VersionID: ver.ID}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Inbound, Media: "audio",
			Status: call.StatusActive, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: answered,
			AnsweredAt: &answered, AssistantID: asst.ID, VersionID: ver.ID}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	ended := func(c call.Call, pending bool) persona.Report {
		u := persona.Usage{LLMPromptTokens: 100, LLMCompletionTokens: 10}
		r := persona.Report{Kind: persona.ReportEnded, CallID: c.ID, SessionID: c.SessionID, At: now,
			EndReason: persona.EndCallerHangup, Transcript: turns, Usage: &u}
		if pending {
			r.Analysis = &persona.AnalysisResult{Status: persona.AnalysisPending}
		}
		return r
	}
	yes := true
	analysed := func(c call.Call) persona.Report {
		u := persona.Usage{LLMPromptTokens: 160, LLMCompletionTokens: 40}
		return persona.Report{Kind: persona.ReportAnalysis, CallID: c.ID, SessionID: c.SessionID, At: now,
			Usage: &u, Analysis: &persona.AnalysisResult{Status: persona.AnalysisCompleted, Summary: "Asked about an order.",
				StructuredData: json.RawMessage(`{"order_id":"6735"}`), Success: &yes}}
	}
	record := func(t *testing.T, id string) (call.Call, session.Session) {
		t.Helper()
		c, err := st.GetCall(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		ses, err := st.GetSession(ctx, c.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		return c, ses
	}
	// order checks call.ended and call.analyzed each once, in that order, and returns
	// call.analyzed's data.
	order := func(t *testing.T, c call.Call) callevent.CallAnalyzed {
		t.Helper()
		endedEvt := eventtest.ExactlyOnce(t, st, acct, callevent.TypeCallEnded, c.ID)
		evt := eventtest.ExactlyOnce(t, st, acct, callevent.TypeCallAnalyzed, c.ID)
		if evt.CreatedAt.Before(endedEvt.CreatedAt) {
			t.Errorf("call.analyzed at %v before call.ended at %v", evt.CreatedAt, endedEvt.CreatedAt)
		}
		var data callevent.CallAnalyzed
		if err := json.Unmarshal(evt.Data, &data); err != nil {
			t.Fatal(err)
		}
		return data
	}
	noAnalyzed := func(t *testing.T, c call.Call) {
		t.Helper()
		evts, err := st.ListEvents(ctx, acct, callevent.TypeCallAnalyzed, listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evts {
			if eventtest.ForCall(c.ID)(e.Data) {
				t.Fatalf("call.analyzed already written: %s", e.Data)
			}
		}
	}

	t.Run("pending, then the worker's result", func(t *testing.T) {
		c := live(t)
		if err := svc.HandleReport(ctx, ended(c, true)); err != nil {
			t.Fatal(err)
		}
		got, ses := record(t, c.ID)
		if got.Status != call.StatusEnded || got.Analysis == nil || got.Analysis.Status != persona.AnalysisPending {
			t.Fatalf("after the ended report: status %s, analysis %+v; want ended, pending", got.Status, got.Analysis)
		}
		if ses.AnalysisDueAt == nil || !ses.AnalysisDueAt.Equal(now.Add(wait)) || ses.SweepAt == nil || !ses.SweepAt.Equal(now.Add(wait)) {
			t.Errorf("analysis due %v, sweep at %v; want both %v", ses.AnalysisDueAt, ses.SweepAt, now.Add(wait))
		}
		eventtest.ExactlyOnce(t, st, acct, callevent.TypeCallEnded, c.ID)
		noAnalyzed(t, c)
		for range 2 { // the second is a redelivery: nothing changes
			if err := svc.HandleReport(ctx, analysed(c)); err != nil {
				t.Fatal(err)
			}
		}
		got, ses = record(t, c.ID)
		a := got.Analysis
		if a == nil || a.Status != persona.AnalysisCompleted || a.Summary != "Asked about an order." ||
			string(a.StructuredData) != `{"order_id":"6735"}` || a.Success == nil || !*a.Success {
			t.Fatalf("record's analysis %+v, want the worker's", a)
		}
		if got.Usage == nil || got.Usage.LLMPromptTokens != 160 || got.Usage.LLMCompletionTokens != 40 {
			t.Errorf("usage %+v, want the analysis report's (the call's and the analysis's tokens)", got.Usage)
		}
		if ses.AnalysisDueAt != nil || ses.Live() {
			t.Errorf("session still awaits the analysis: due %v, live %v", ses.AnalysisDueAt, ses.Live())
		}
		data := order(t, c)
		if data.Status != persona.AnalysisCompleted || data.Summary == nil || *data.Summary != "Asked about an order." ||
			data.VersionID != ver.ID || data.AssistantID != asst.ID || data.Error != nil {
			t.Errorf("call.analyzed data %+v", data)
		}
		// A redelivered ended report after the analysis neither reopens it nor undoes its usage.
		if err := svc.HandleReport(ctx, ended(c, true)); err != nil {
			t.Fatal(err)
		}
		if got, _ = record(t, c.ID); got.Analysis.Status != persona.AnalysisCompleted || got.Usage.LLMPromptTokens != 160 {
			t.Errorf("after a redelivered ended report: analysis %s, prompt tokens %d", got.Analysis.Status, got.Usage.LLMPromptTokens)
		}
	})

	t.Run("the sweeper fails an analysis that does not come", func(t *testing.T) {
		c := live(t)
		if err := svc.HandleReport(ctx, ended(c, true)); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := record(t, c.ID); got.Analysis.Status != persona.AnalysisPending {
			t.Fatalf("swept before the wait: %+v", got.Analysis)
		}
		now = now.Add(wait)
		defer func() { now = now.Add(-wait) }()
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got, ses := record(t, c.ID)
		if got.Analysis.Status != persona.AnalysisFailed || !strings.Contains(got.Analysis.Error, "within 5m0s") || ses.Live() {
			t.Fatalf("after the wait: analysis %+v, session live %v", got.Analysis, ses.Live())
		}
		if data := order(t, c); data.Status != persona.AnalysisFailed || data.Error == nil {
			t.Errorf("call.analyzed data %+v", data)
		}
		// The worker's result, late, changes nothing.
		if err := svc.HandleReport(ctx, analysed(c)); err != nil {
			t.Fatal(err)
		}
		if got, _ := record(t, c.ID); got.Analysis.Status != persona.AnalysisFailed {
			t.Errorf("a late analysis replaced the failure: %+v", got.Analysis)
		}
		order(t, c)
	})

	t.Run("no ended report: failed with call.ended", func(t *testing.T) {
		c := live(t)
		if _, err := svc.Delete(ctx, acct, c.SessionID); err != nil {
			t.Fatal(err)
		}
		noAnalyzed(t, c)
		now = now.Add(time.Minute) // past the report wait
		defer func() { now = now.Add(-time.Minute) }()
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got, _ := record(t, c.ID)
		if got.AssistantReport != call.ReportMissing || got.Analysis == nil || got.Analysis.Status != persona.AnalysisFailed ||
			!strings.Contains(got.Analysis.Error, "no final report") {
			t.Fatalf("record: report %q, analysis %+v", got.AssistantReport, got.Analysis)
		}
		order(t, c)
	})

	t.Run("an analysis of a live call is refused", func(t *testing.T) {
		c := live(t)
		err := svc.HandleReport(ctx, analysed(c))
		if e, ok := apierr.As(err); !ok || e.Param != "kind" {
			t.Fatalf("HandleReport = %v, want 400 on kind", err)
		}
		if got, _ := record(t, c.ID); got.Analysis != nil {
			t.Errorf("record's analysis %+v", got.Analysis)
		}
	})
}
