package session

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// Get returns the account's session.
func (s *Service) Get(ctx context.Context, accountID, id string) (Session, error) {
	ses, err := s.records.GetSession(ctx, id)
	return apierr.Owned(ses, ses.AccountID, err, accountID, apierr.NotFound("session", id))
}

// List returns a page of the account's sessions, newest first.
func (s *Service) List(ctx context.Context, accountID string, q ListQuery) ([]Session, error) {
	return s.records.ListSessions(ctx, accountID, q)
}

// Delete ends the session: the room is deleted (everyone in it is disconnected and its
// tokens can no longer join), the platform call is hung up and call.ended is written, once.
// Deleting an ended session returns it unchanged.
func (s *Service) Delete(ctx context.Context, accountID, id string) (Session, error) {
	if _, err := s.Get(ctx, accountID, id); err != nil {
		return Session{}, err
	}
	ses, _, err := s.end(ctx, id, StatusEnded, call.ReasonDeleted, call.EndedByCustomer)
	return ses, err
}

// mutate applies change to a session and its call and saves them, conditionally, reading
// again when another writer got there first. change reports whether it changed anything.
// Every write gives the session its SweepAt (sweepAt), in the same write.
func (s *Service) mutate(ctx context.Context, sessionID string, change func(*Session, *call.Call) ([]callevent.Event, bool, error)) (Session, call.Call, error) {
	var outS Session
	var outC call.Call
	err := retry.OnConflict(func() error {
		ses, err := s.records.GetSession(ctx, sessionID)
		if err != nil {
			return fmt.Errorf("get session %s: %w", sessionID, err)
		}
		c, err := s.records.GetCall(ctx, ses.CallID)
		if err != nil {
			return fmt.Errorf("get call %s: %w", ses.CallID, err)
		}
		evts, changed, err := change(&ses, &c)
		if err != nil || !changed {
			outS, outC = ses, c
			return err
		}
		s.scheduleAnalysis(&ses, c)
		ses.SweepAt = s.sweepAt(ses)
		if err := s.records.SaveSession(ctx, ses, c, evts); err != nil {
			return fmt.Errorf("save session %s: %w", sessionID, err)
		}
		ses.Revision++
		c.Revision++
		c.TakeUsageDue() // as the store wrote it
		c.TakeQualityDue()
		s.notify(evts)
		outS, outC = ses, c
		return nil
	})
	return outS, outC, err
}

// mutateCall is mutate for a call on its own (one that never got a session).
func (s *Service) mutateCall(ctx context.Context, callID string, change func(*call.Call) ([]callevent.Event, bool, error)) (call.Call, error) {
	var out call.Call
	err := retry.OnConflict(func() error {
		c, err := s.records.GetCall(ctx, callID)
		if err != nil {
			return fmt.Errorf("get call %s: %w", callID, err)
		}
		evts, changed, err := change(&c)
		if err != nil || !changed {
			out = c
			return err
		}
		if err := s.records.SaveCall(ctx, c, evts); err != nil {
			return fmt.Errorf("save call %s: %w", callID, err)
		}
		c.Revision++
		c.TakeUsageDue() // as the store wrote it
		c.TakeQualityDue()
		s.notify(evts)
		out = c
		return nil
	})
	return out, err
}

// end finishes a session and its call once: status ended (or failed), the reason, who
// ended it, and call.ended in the same write. The room is deleted and the platform call
// hung up whenever the session is found live or the end is asked for explicitly (DELETE),
// so a retry completes a clean-up that failed half way.
func (s *Service) end(ctx context.Context, sessionID, status, reason, by string) (Session, call.Call, error) {
	ses, c, _, err := s.endIf(ctx, sessionID, nil, status, reason, by)
	return ses, c, err
}

// live is an endIf condition: the session has not ended.
func live(ses Session, _ call.Call) bool { return !ses.Over() }

// endIf is end when cond (nil: always) holds for the session and call as they are read
// at write time. When it does not, nothing is written and nothing cleaned up, and ended
// is false: an end that is only right while a state lasts (a sweep's, a late worker
// report's) cannot act on a session that moved on.
func (s *Service) endIf(ctx context.Context, sessionID string, cond func(Session, call.Call) bool, status, reason, by string) (Session, call.Call, bool, error) {
	return s.endWith(ctx, sessionID, cond, "", status, reason, by)
}

// endWith is endIf that also records the platform's id of the call (pcid, from the
// platform's notification that ends it) when the record lacks it, in the same write.
func (s *Service) endWith(ctx context.Context, sessionID string, cond func(Session, call.Call) bool, pcid, status, reason, by string) (Session, call.Call, bool, error) {
	now := s.now()
	held := true
	ses, c, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if held = cond == nil || cond(*ses, *c); !held {
			return nil, false, nil
		}
		var evts []callevent.Event
		changed := notePlatformID(c, pcid)
		if !ses.Over() {
			st := status
			if st == StatusEnded && ses.Status == StatusRinging && reason != call.ReasonDeleted && reason != call.ReasonParticipantLeft {
				// Never connected: a ringing session that ends for any reason but the
				// customer's own is a failed one.
				st = StatusFailed
			}
			ses.Status, ses.EndReason, ses.EndedAt = st, reason, &now
			changed = true
		}
		if evt, ok := c.End(callStatus(ses.Status, reason), reason, by, now, newEventID); ok {
			evt = endedEvent(*ses, *c, evt.ID, evt.CreatedAt)
			changed = true
			switch {
			case awaitsReport(*ses, *c):
				// The worker is still to send its transcript: call.ended waits for it
				// (HandleReport), or for Sweep once the wait is over.
				due := now.Add(s.set.ReportWait)
				ses.ReportDueAt = &due
			case ses.Mode == ModeAssistant && c.AssistantReport == "":
				c.AssistantReport = call.ReportMissing // no worker ever reported
				c.RecordingUnreported()
				evts = append(evts, evt)
			default:
				evts = append(evts, evt)
			}
		}
		return evts, changed, nil
	})
	if err != nil || !held {
		return ses, c, false, err
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if f := s.set.CallEnded; f != nil && c.Over() {
		// Told after every write that leaves the call over: f ignores what it settled.
		f(cleanup, c)
	}
	// The platform leg ends before the room goes: a hang-up returns once the party is
	// out of the room, its join included (platform.Platform.Hangup). livekit-server
	// v1.11.0 keeps a room deleted while a participant joins it alive outside its room
	// table for good (docs/deploy.md, "Memory"), which a delete that comes first meets
	// whenever a session ends during its party's join.
	s.endPlatformLeg(cleanup, c, reason)
	if err := s.rooms.DeleteRoom(cleanup, ses.ID); err != nil {
		// The call record is complete; Sweep deletes the room again until it is gone (and
		// the room's own timeouts close it meanwhile).
		s.log().Error("delete room", "session_id", ses.ID, "err", err)
		s.markRoomPending(cleanup, ses.ID)
	}
	return ses, c, true, nil
}

// endPlatformLeg rejects (never answered) or hangs up the call's platform leg, unless
// the remote party ended it. A failure is logged: the record is complete, and the
// platform ends a call whose room is gone.
func (s *Service) endPlatformLeg(ctx context.Context, c call.Call, reason string) {
	if id := platformID(c); id != "" && reason != call.ReasonRemoteHangup {
		if plat, ok := s.set.Platforms.Lookup(c.Platform); ok {
			var err error
			if c.Status == call.StatusDeclined {
				// Never answered: the ringing call is rejected rather than hung up.
				err = ignoreGone(platform.RejectCall(ctx, plat, id, c.ID, reason))
			} else {
				err = plat.Hangup(ctx, id)
			}
			if err != nil {
				s.log().Error("hang up", "call_id", c.ID, "err", err)
			}
		}
	}
}

// platformID is the id to hang a call up by: the platform's, or, for a dialled call whose
// platform id no notification recorded yet, Bridgeline's (platform.Platform.Hangup takes
// either). Empty when there is no platform call to end.
func platformID(c call.Call) string {
	if c.PlatformCallID == "" && c.Direction == call.Outbound {
		return c.ID
	}
	return c.PlatformCallID
}

// notePlatformID records the platform's id of a call from one of its notifications, once,
// and reports whether it did.
func notePlatformID(c *call.Call, pcid string) bool {
	if pcid == "" || c.PlatformCallID != "" {
		return false
	}
	c.PlatformCallID = pcid
	return true
}

// markRoomPending records that a session's room is still to be deleted; Sweep retries.
// An error is only logged: the room's own timeouts close it anyway.
func (s *Service) markRoomPending(ctx context.Context, sessionID string) {
	_, _, err := s.mutate(ctx, sessionID, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		if ses.RoomPending {
			return nil, false, nil
		}
		ses.RoomPending = true
		return nil, true, nil
	})
	if err != nil {
		s.log().Error("mark room pending", "session_id", sessionID, "err", err)
	}
}

// awaitsReport: an assistant call a worker took (it reported) whose final report is not in.
func awaitsReport(ses Session, c call.Call) bool {
	return ses.Mode == ModeAssistant && ses.AssistantSeenAt != nil && c.AssistantReport != call.ReportReceived
}

// callStatus is the call's final status for a session's.
func callStatus(sessionStatus, reason string) string {
	switch {
	case reason == call.ReasonDeclined || reason == call.ReasonDecisionTimeout:
		return call.StatusDeclined
	case sessionStatus == StatusFailed:
		return call.StatusFailed
	}
	return call.StatusEnded
}

// answered marks a ringing session and its call answered, with call.answered, and in an
// assistant session dispatches the assistant (dispatchAssistant). won reports whether
// this call made the change (a redelivered answer does not, and dispatches nothing).
func (s *Service) answered(ctx context.Context, sessionID string, decided func(*call.Call)) (Session, call.Call, bool, error) {
	ses, c, won, err := s.markAnswered(ctx, sessionID, decided)
	if err != nil || !won || ses.Mode != ModeAssistant {
		return ses, c, won, err
	}
	return ses, c, won, s.dispatchAssistant(ctx, ses, c)
}

// markAnswered is answered's write.
func (s *Service) markAnswered(ctx context.Context, sessionID string, decided func(*call.Call)) (ses Session, c call.Call, won bool, err error) {
	now := s.now()
	ses, c, err = s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		won = false
		if ses.Status != StatusRinging || c.Status != call.StatusRinging {
			return nil, false, nil
		}
		if decided != nil {
			decided(c)
			ses.Media = c.Media
		}
		ses.Status, ses.AnsweredAt = StatusActive, &now
		c.Answer(now)
		won = true
		return []callevent.Event{c.AnsweredEvent(newEventID())}, true, nil
	})
	return ses, c, won, err
}
