package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Post-call analysis. The persona worker asks the model after its ended report, so that
// call.ended is never held for the model: the ended report says analysis pending, and
// the analysis report (persona.ReportAnalysis) brings the result and call.analyzed, in
// the same write. Nothing stays pending for good: a session whose call's analysis is
// pending when it ends keeps AnalysisDueAt (AnalysisWait after that write) and stays in
// the sweep index, and Sweep fails the analysis then (analysisOverdue). A call whose
// worker took it but never sent its ended report has its analysis failed when Sweep
// releases its call.ended without the report (its version read then: the sweeper's
// function may read the versions table). A call no worker ever took has no analysis.

// DefaultAnalysisWait bounds the wait for a worker's analysis after the call's end: the
// worker asks the model twice at most, a minute each (mediafleet/analysis), then sends
// its report with retries.
const DefaultAnalysisWait = 5 * time.Minute

// WithAnalysisWait is how long a call's analysis may stay pending after its end
// (default DefaultAnalysisWait).
func WithAnalysisWait(d time.Duration) Option {
	return func(s *Settings) error { return positive("analysis wait", d, &s.AnalysisWait) }
}

// Reasons of analyses the control plane fails.
const (
	analysisNoReport = "the assistant's worker sent no final report, so the call could not be analysed"
	analysisTimedOut = "no analysis came from the assistant's worker within %s of the call's end"
)

// analysed applies a worker's analysis report: the call's analysis, final, and
// call.analyzed, once. A call still live is refused (400 on kind): the worker sends its
// analysis after its ended report, which ends the call.
func (s *Service) analysed(ctx context.Context, c call.Call, rep persona.Report) error {
	if rep.Analysis == nil || !rep.Analysis.Final() {
		return apierr.Invalid("analysis", "an analysis report needs a final analysis: completed, failed or skipped")
	}
	at := rep.At
	if at.IsZero() || at.Before(s.now()) {
		at = s.now() // after call.ended, whatever the worker's clock says
	}
	apply := func(c *call.Call) ([]callevent.Event, bool, error) {
		if !c.Over() {
			return nil, false, apierr.Invalid("kind", fmt.Sprintf("call %s has not ended; its analysis comes after its end", c.ID))
		}
		evt, ok := c.Analyse(*rep.Analysis, newEventID(), at)
		if !ok {
			return nil, false, nil // a redelivery, or a late report after the wait
		}
		if rep.Usage != nil {
			c.CountUsage(*rep.Usage) // the analysis's tokens beside the call's
		}
		return []callevent.Event{evt}, true, nil
	}
	if c.SessionID == "" {
		_, err := s.mutateCall(ctx, c.ID, apply)
		return err
	}
	_, _, err := s.mutate(ctx, c.SessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) { return apply(c) })
	return err
}

// scheduleAnalysis keeps a session's AnalysisDueAt as its call stands before a write:
// set once the session is over with its call's analysis pending, cleared once the
// analysis is final.
func (s *Service) scheduleAnalysis(ses *Session, c call.Call) {
	switch {
	case !c.AnalysisPending():
		ses.AnalysisDueAt = nil
	case ses.Over() && ses.AnalysisDueAt == nil:
		due := s.now().Add(s.set.AnalysisWait)
		ses.AnalysisDueAt = &due
	}
}

// analysisOverdue: the analysis a session's call waits for is past its wait.
func analysisOverdue(ses Session, now time.Time) bool {
	return ses.AnalysisDueAt != nil && !now.Before(*ses.AnalysisDueAt)
}

// expireAnalysis fails the analysis of a session's call that stayed pending past its
// wait, with call.analyzed, in one conditional write: one that came meanwhile leaves
// nothing to do.
func (s *Service) expireAnalysis(ctx context.Context, sessionID string, now time.Time) (bool, error) {
	did := false
	_, _, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if !analysisOverdue(*ses, now) {
			return nil, false, nil
		}
		if !c.AnalysisPending() {
			return nil, true, nil // scheduleAnalysis clears the stale due time
		}
		evt, ok := c.Analyse(call.Analysis{Status: persona.AnalysisFailed,
			Error: fmt.Sprintf(analysisTimedOut, s.set.AnalysisWait)}, newEventID(), s.now())
		did = ok
		return []callevent.Event{evt}, true, nil
	})
	return did && err == nil, err
}

// analysisUnavailable fails the analysis of an assistant call whose worker's ended
// report is missing, when its version asks for one; its call.analyzed follows
// call.ended in the same write (releaseEnded). The version is read then, once per such
// call. A version that cannot be read leaves the record
// without an analysis (logged).
func (s *Service) analysisUnavailable(ctx context.Context, ses Session, c *call.Call, at time.Time) []callevent.Event {
	if ses.VersionID == "" || c.Analysis != nil {
		return nil
	}
	v, err := s.assistants.GetVersion(ctx, ses.VersionID)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	if err != nil {
		s.log().Error("read the version of a call without its report; no analysis recorded", "call_id", c.ID, "err", err)
		return nil
	}
	if v.Analysis == nil {
		return nil
	}
	evt, ok := c.Analyse(call.Analysis{Status: persona.AnalysisFailed, Error: analysisNoReport}, newEventID(), at)
	if !ok {
		return nil
	}
	return []callevent.Event{evt}
}
