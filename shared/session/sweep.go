package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/call"
)

// sweepPage is how many due sessions Sweep reads at a time.
const sweepPage = 100

// Sweep ends the live sessions that are past a limit:
//
//   - max_duration: MaxDuration after the session was created;
//   - assistant_unavailable: an assistant call answered DispatchTimeout ago with no
//     report from any persona worker yet. livekit-server drops an agent dispatch
//     without a word when no worker is free (a refused job request is only logged:
//     pkg/agent/client.go, v1.8.4 and v1.11.0 alike), so silence is the only sign;
//   - join_timeout: a web call whose caller has not joined JoinTimeout after it was
//     created (webcall.go);
//   - a customer_decides call's decision (decide.go): carried out once recorded through
//     the API (the session is then due at once), or the line's no-answer default once
//     the call's answer_by passed unanswered;
//   - no_answer: a session still ringing RingTimeout after it was created. The
//     platform's own outcome never came, or a create or an inbound call's routing
//     crashed half way.
//
// It deletes again the rooms of ended sessions whose deletion failed (RoomPending), until
// LiveKit confirms each is gone.
//
// It also sends the call.ended that an ended assistant call held for its worker's final
// report once ReportWait is over without it (the record then reads assistant_report:
// missing); that is not counted as an end.
//
// It reads only the sessions whose SweepAt has come (SweepIndex), so a tick costs what is
// due, not what is live. A due session none of the above applies to (written under other
// settings, or before the index existed) gets its SweepAt written again as this service
// computes it.
//
// Each end is conditional on the session as it stands when the end is written, through
// the same path as every other end: a session that ended meanwhile, or whose worker
// reported meanwhile, is left alone, and call.ended is written once. Sweep returns how
// many sessions it ended.
//
// The local stack runs it every second (RunSweeper); on AWS a scheduled function runs it.
// The Records store must implement SweepIndex.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	idx, ok := s.records.(SweepIndex)
	if !ok {
		return 0, fmt.Errorf("sweep: store %T keeps no sweep index", s.records)
	}
	now := s.now()
	maxDur, dispatch, ring, join := s.set.MaxDuration, s.set.DispatchTimeout, s.set.RingTimeout, s.set.JoinTimeout
	ended := 0
	var errs []error
	var after DueKey
	for {
		page, err := idx.DueSessions(ctx, now, after, sweepPage)
		if err != nil {
			return ended, errors.Join(append(errs, fmt.Errorf("sweep: list due sessions: %w", err))...)
		}
		for _, ses := range page {
			if k, ok := ses.Due(); ok {
				after = k
			}
			switch {
			case reportOverdue(ses, now):
				did, err := s.releaseEnded(ctx, ses.ID, now)
				if err != nil {
					errs = append(errs, fmt.Errorf("sweep: release call.ended of %s: %w", ses.ID, err))
				} else if did {
					s.log().Warn("call.ended sent without the worker's final report", "session_id", ses.ID, "call_id", ses.CallID)
				}
				continue
			case analysisOverdue(ses, now):
				did, err := s.expireAnalysis(ctx, ses.ID, now)
				if err != nil {
					errs = append(errs, fmt.Errorf("sweep: expire the analysis of %s: %w", ses.ID, err))
				} else if did {
					s.log().Warn("analysis failed: none came from the worker in time", "session_id", ses.ID, "call_id", ses.CallID)
				}
				continue // a room still to delete is due at once on the next sweep
			case decisionDue(ses, now) && !ringingTooLong(ses, now, ring):
				if err := s.decideNow(ctx, ses.ID, false, false); err != nil {
					errs = append(errs, fmt.Errorf("sweep: carry out the decision of %s: %w", ses.ID, err))
				}
				continue
			case ses.Over() && ses.RoomPending:
				if err := s.deletePendingRoom(ctx, ses.ID); err != nil {
					errs = append(errs, fmt.Errorf("sweep: delete room of %s: %w", ses.ID, err))
				}
				continue
			}
			var cond func(Session, call.Call) bool
			status, reason := StatusEnded, ""
			switch {
			case tooLong(ses, now, maxDur):
				reason = call.ReasonMaxDuration
				cond = func(ses Session, _ call.Call) bool { return tooLong(ses, now, maxDur) }
			case unattended(ses, now, dispatch):
				status, reason = StatusFailed, call.ReasonAssistantUnavailable
				cond = func(ses Session, _ call.Call) bool { return unattended(ses, now, dispatch) }
			case joinTimedOut(ses, now, join):
				status, reason = StatusFailed, call.ReasonJoinTimeout
				cond = func(ses Session, _ call.Call) bool { return joinTimedOut(ses, now, join) }
			case ringingTooLong(ses, now, ring):
				status, reason = StatusFailed, call.ReasonNoAnswer
				cond = func(ses Session, _ call.Call) bool { return ringingTooLong(ses, now, ring) }
			default:
				if err := s.reschedule(ctx, ses.ID); err != nil {
					errs = append(errs, fmt.Errorf("sweep: reschedule %s: %w", ses.ID, err))
				}
				continue
			}
			_, _, did, err := s.endIf(ctx, ses.ID, cond, status, reason, call.EndedBySystem)
			if err != nil {
				errs = append(errs, fmt.Errorf("sweep: end %s: %w", ses.ID, err))
				continue
			}
			if did {
				ended++
				s.log().Info("session swept", "session_id", ses.ID, "call_id", ses.CallID, "end_reason", reason)
			}
		}
		if len(page) < sweepPage {
			return ended, errors.Join(errs...)
		}
	}
}

// sweepAt is when Sweep next has something to check on ses as it is about to be
// written (Session.SweepAt): the earliest of the limits a live session can still reach
// under this service's settings, its held call.ended's due time, and, for an ended
// session whose room is still to be deleted, its end (due at once). Nil when the sweeper
// has nothing left to do on it.
func (s *Service) sweepAt(ses Session) *time.Time {
	var at *time.Time
	earliest := func(t time.Time) {
		if at == nil || t.Before(*at) {
			at = &t
		}
	}
	if ses.Held() {
		earliest(*ses.ReportDueAt)
	}
	if ses.AnalysisDueAt != nil {
		earliest(*ses.AnalysisDueAt)
	}
	if ses.Over() && ses.RoomPending {
		if ses.EndedAt != nil {
			earliest(*ses.EndedAt)
		} else {
			earliest(ses.CreatedAt)
		}
	}
	if !ses.Over() {
		earliest(ses.CreatedAt.Add(s.set.MaxDuration))
		if ses.Status == StatusRinging {
			earliest(ses.CreatedAt.Add(s.set.RingTimeout))
			if ses.WebCall() {
				earliest(s.joinDeadline(ses))
			}
			if ses.DecideBy != nil {
				earliest(*ses.DecideBy)
			}
		}
		if ses.Mode == ModeAssistant && ses.Status == StatusActive && ses.AnsweredAt != nil && ses.AssistantSeenAt == nil {
			earliest(ses.AnsweredAt.Add(s.set.DispatchTimeout))
		}
	}
	return at
}

// reschedule writes a session's SweepAt again (mutate sets it) when it is not what this
// service computes: Sweep found it due with nothing to do.
func (s *Service) reschedule(ctx context.Context, sessionID string) error {
	_, _, err := s.mutate(ctx, sessionID, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		return nil, !sameTime(ses.SweepAt, s.sweepAt(*ses)), nil
	})
	return err
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// releaseEnded writes the held call.ended of a session whose worker's final report is
// overdue, and marks the record's report missing, in one conditional write: a report that
// came meanwhile (HandleReport released it) leaves nothing to do.
func (s *Service) releaseEnded(ctx context.Context, sessionID string, now time.Time) (bool, error) {
	released := false
	_, _, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if released = reportOverdue(*ses, now); !released {
			return nil, false, nil
		}
		ses.ReportDueAt = nil
		c.AssistantReport = call.ReportMissing
		c.RecordingUnreported()
		at := s.now()
		evts := []callevent.Event{endedEvent(*ses, *c, newEventID(), at)}
		return append(evts, s.analysisUnavailable(ctx, *ses, c, at)...), true, nil
	})
	return released && err == nil, err
}

// deletePendingRoom deletes the room of an ended session again and, once LiveKit
// confirms it is gone, clears RoomPending.
func (s *Service) deletePendingRoom(ctx context.Context, sessionID string) error {
	if err := s.rooms.DeleteRoom(ctx, sessionID); err != nil {
		return err
	}
	_, _, err := s.mutate(ctx, sessionID, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		if !ses.RoomPending {
			return nil, false, nil
		}
		ses.RoomPending = false
		return nil, true, nil
	})
	return err
}

// ringingTooLong: a session still ringing past the ring timeout.
func ringingTooLong(ses Session, now time.Time, limit time.Duration) bool {
	return ses.Status == StatusRinging && !now.Before(ses.CreatedAt.Add(limit))
}

// reportOverdue: a held call.ended whose wait for the worker's report is over.
func reportOverdue(ses Session, now time.Time) bool {
	return ses.Held() && !now.Before(*ses.ReportDueAt)
}

// tooLong: a live session older than the maximum.
func tooLong(ses Session, now time.Time, limit time.Duration) bool {
	return !ses.Over() && !now.Before(ses.CreatedAt.Add(limit))
}

// unattended: a live, answered assistant session no worker has reported on within the
// bound.
func unattended(ses Session, now time.Time, bound time.Duration) bool {
	return !ses.Over() && ses.Mode == ModeAssistant && ses.Status == StatusActive && ses.AnsweredAt != nil &&
		ses.AssistantSeenAt == nil && !now.Before(ses.AnsweredAt.Add(bound))
}

// RunSweeper runs Sweep at once and then every interval until ctx ends. Errors are
// logged; the next sweep tries again.
func (s *Service) RunSweeper(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log().Error("sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepHandler is the handler of the scheduled function that sweeps on AWS, for
// lambda.Start: each invocation sweeps every `every` for `window` (keep window under the
// schedule's period and the function's timeout), so the dispatch watchdog acts within
// seconds although schedules fire at most once a minute. A failed sweep is logged and
// retried at the next tick, not returned: the schedule would only run it again.
func (s *Service) SweepHandler(window, every time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, window)
		defer cancel()
		s.RunSweeper(ctx, every)
		return nil
	}
}
