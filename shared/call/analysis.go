package call

import (
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Analysis is an assistant call's post-call analysis (persona.AnalysisResult): pending
// from the worker's ended report of a call whose version asks for one, then completed,
// failed or skipped, once. A call no analysis was asked of has none (nil).
type Analysis = persona.AnalysisResult

// AnalysisPending reports whether the call's analysis is announced and not final.
func (c Call) AnalysisPending() bool {
	return c.Analysis != nil && c.Analysis.Status == persona.AnalysisPending
}

// AnalysisFinal reports whether the call's analysis is final.
func (c Call) AnalysisFinal() bool { return c.Analysis != nil && c.Analysis.Final() }

// Analyse sets the call's final analysis, once: it reports whether it changed the call,
// and returns the call.analyzed event to write with the change. A call whose analysis is
// final keeps it (a redelivered or late report changes nothing).
func (c *Call) Analyse(res Analysis, eventID string, at time.Time) (callevent.Event, bool) {
	if !res.Final() || c.Analysis != nil && c.Analysis.Final() {
		return callevent.Event{}, false
	}
	r := res
	c.Analysis = &r
	c.RedactAgain() // a redacted call's analysis keeps its status only, in the event too
	return c.AnalyzedEvent(eventID, at), true
}

// AnalyzedEvent is the call.analyzed event of a call whose analysis is final.
func (c Call) AnalyzedEvent(eventID string, at time.Time) callevent.Event {
	a := c.Analysis
	return c.event(callevent.TypeCallAnalyzed, eventID, at, callevent.CallAnalyzed{
		CallID: c.ID, SessionID: c.SessionID, LineID: c.LineID, Direction: c.Direction,
		AssistantID: c.AssistantID, VersionID: c.VersionID,
		Status: a.Status, Summary: nonEmpty(a.Summary), StructuredData: a.StructuredData, Success: a.Success, Error: nonEmpty(a.Error),
		Metadata: c.Metadata,
	})
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
