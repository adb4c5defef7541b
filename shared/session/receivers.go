package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings/reckey"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// HandleLiveKit acts on a verified LiveKit webhook: the last customer client leaving a
// human session ends it, a customer client joining an assistant session with a publishing
// token is made watch-only, and a room LiveKit closed by itself ends its session. In a
// web call the caller's client joining answers the call and its leaving hangs up
// (webcall.go).
//
// Every customer token has its own identity (customer-...), so several clients may be in
// the room at once; the session ends when one leaves and LiveKit lists no other customer
// client in the room. A client replaced by its own reconnection (DUPLICATE_IDENTITY)
// has not left. Should LiveKit not answer the list, the error is returned (the webhook
// answers 500) and nothing ends: ending on a guess would cut off the clients still there.
//
// An assistant (kind AGENT) joining an assistant session proves a worker took the call
// (assistantJoined), as its first report does.
//
// Nobody else's leaving ends anything here: the platform party's hang-up comes from its
// platform (the sim's notification), and the assistant (kind AGENT, identity
// assistant-<job id>) leaving is followed by its worker's report, or, when the worker died
// without one, by the caller hanging up.
func (s *Service) HandleLiveKit(ctx context.Context, ev rtc.WebhookEvent) error {
	room := ev.Room
	p := ev.Participant
	if p == nil {
		p = &rtc.Participant{}
	}
	s.log().Debug("livekit webhook", "event", ev.Event, "room", room, "identity", p.Identity, "reason", p.DisconnectReason)
	if !ident.Valid("ses", room) {
		return nil
	}
	switch ev.Event {
	case rtc.EventParticipantLeft:
		if !IsCustomerIdentity(p.Identity) || p.Kind == rtc.KindAgent || p.Kind == rtc.KindSIP ||
			p.DisconnectReason == rtc.DisconnectDuplicateIdentity {
			return nil
		}
		ses, err := s.records.GetSession(ctx, room)
		if errors.Is(err, apierr.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if ses.WebCall() && p.Identity == ses.Caller {
			if ses.Over() {
				return nil
			}
			return s.callerLeft(ctx, room)
		}
		if ses.Mode != ModeHuman || ses.Over() {
			// In an assistant session the customer's clients only watch; their leaving
			// does not hang up on the caller.
			return nil
		}
		if others, err := s.otherCustomerPresent(ctx, room, p.Identity); err != nil || others {
			return err
		}
		_, _, _, err = s.endIf(ctx, room, func(ses Session, _ call.Call) bool { return !ses.Over() && ses.Mode == ModeHuman },
			StatusEnded, call.ReasonParticipantLeft, call.EndedByCustomer)
		return err
	case rtc.EventParticipantJoined:
		if p.Kind == rtc.KindAgent {
			return s.assistantJoined(ctx, room)
		}
		// A customer client that may publish joining an assistant session (with a token
		// minted before the call went to the assistant) is made watch-only; a web call's
		// caller joining answers the call.
		if !IsCustomerIdentity(p.Identity) || p.Kind != rtc.KindStandard || !p.CanPublish {
			return nil
		}
		ses, err := s.records.GetSession(ctx, room)
		if errors.Is(err, apierr.ErrNotFound) {
			return nil
		}
		if err != nil || ses.Mode != ModeAssistant || ses.Over() {
			return err
		}
		if ses.WebCall() && p.Identity == ses.Caller {
			return s.callerJoined(ctx, room)
		}
		return s.rooms.SubscribeOnly(ctx, room, p.Identity)
	case rtc.EventRoomFinished:
		_, _, _, err := s.endIf(ctx, room, live, StatusEnded, call.ReasonRoomClosed, call.EndedBySystem)
		if errors.Is(err, apierr.ErrNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// assistantJoined records that a persona worker took an assistant call: LiveKit saw its
// participant (kind AGENT, which only a dispatched agent has) join the call's room. It is
// the second proof beside the worker's first report (HandleReport), on another path
// (livekit-server's webhook, not the worker's report), so a call whose reports are
// delayed or refused is not ended assistant_unavailable by the dispatch watchdog while
// its assistant is in the room. A redelivered join changes nothing.
func (s *Service) assistantJoined(ctx context.Context, room string) error {
	ses, err := s.records.GetSession(ctx, room)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	if err != nil || ses.Mode != ModeAssistant || ses.Over() || ses.AssistantSeenAt != nil {
		return err
	}
	now := s.now()
	_, _, err = s.mutate(ctx, room, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		if ses.Mode != ModeAssistant || ses.Over() || ses.AssistantSeenAt != nil {
			return nil, false, nil
		}
		ses.AssistantSeenAt = &now
		return nil, true, nil
	})
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}

// HandleReport applies a persona worker's report to its call. Any report is the proof
// that a worker took the call (the dispatch watchdog's). Metrics are merged as they come;
// the ended report's transcript is kept. An ended report ends a call that is still live,
// by its reason; one that arrives after the call ended (room_closed and terminated come
// after the control plane deleted the room) changes nothing but filling in the metrics and
// transcript the record lacks, and sends the call.ended that waited for it (endIf holds
// it), in the same write. Reports are idempotent: a redelivery changes nothing.
func (s *Service) HandleReport(ctx context.Context, rep persona.Report) error {
	c, err := s.records.GetCall(ctx, rep.CallID)
	if errors.Is(err, apierr.ErrNotFound) {
		return apierr.NotFound("call", rep.CallID)
	}
	if err != nil {
		return err
	}
	if r := rep.Recording; r != nil && r.Key != "" && r.Key != reckey.For(c.AccountID, c.ID) {
		// A worker names only the file of its own call: a key elsewhere (another call's,
		// another account's) would hand that file out under this call's URL.
		return apierr.Invalid("recording.key", fmt.Sprintf("the recording of call %s is kept under %q, not %q",
			c.ID, reckey.For(c.AccountID, c.ID), r.Key))
	}
	switch rep.Kind {
	case persona.ReportTurn:
		return s.transcribed(ctx, c, rep)
	case persona.ReportAnalysis:
		return s.analysed(ctx, c, rep)
	}
	now := s.now()
	if c.SessionID == "" {
		_, err := s.mutateCall(ctx, c.ID, func(c *call.Call) ([]callevent.Event, bool, error) {
			changed, evts := applyReport(c, rep, now)
			return evts, changed, nil
		})
		return err
	}
	if _, _, err := s.mutate(ctx, c.SessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		changed, evts := applyReport(c, rep, now)
		if ses.AssistantSeenAt == nil {
			ses.AssistantSeenAt = &now
			changed = true
		}
		if rep.Kind == persona.ReportEnded && ses.Held() {
			ses.ReportDueAt = nil
			evts = append(evts, endedEvent(*ses, *c, newEventID(), now))
			changed = true
		}
		return evts, changed, nil
	}); err != nil {
		return err
	}
	if rep.Kind != persona.ReportEnded {
		return nil
	}
	status, reason, by := reportEnd(rep.EndReason)
	_, _, _, err = s.endIf(ctx, c.SessionID, live, status, reason, by)
	return err
}

// transcribed writes the call.transcript event of a turn report: to the outbox on its own,
// with no change to the call record (the ended report brings the whole transcript), so a
// turn costs one write. Its id is derived from the call and the turn's sequence number,
// so a redelivered report finds its event written and adds none. A turn that is not a
// caller's or an assistant's, or that comes without its data, is refused.
func (s *Service) transcribed(ctx context.Context, c call.Call, rep persona.Report) error {
	t := rep.Turn
	if t == nil || rep.Sequence < 1 || t.Speaker != persona.SpeakerCaller && t.Speaker != persona.SpeakerAssistant {
		return apierr.Invalid("turn", "a turn report needs a caller or assistant turn and a sequence from 1")
	}
	at := rep.At
	if at.IsZero() {
		at = s.now()
	}
	evt := c.TranscriptEvent(ident.Derived("evt", at, fmt.Sprintf("%s#%d", c.ID, rep.Sequence)), at, rep.Sequence, *t)
	err := s.records.QueueEvent(ctx, evt)
	if errors.Is(err, apierr.ErrConflict) {
		return nil // a redelivered report: its event is written
	}
	if err != nil {
		return fmt.Errorf("queue call.transcript of %s: %w", c.ID, err)
	}
	s.notify([]callevent.Event{evt})
	return nil
}

// reportEnd is how a worker's end reason ends a call that is still live.
func reportEnd(workerReason string) (status, reason, by string) {
	switch workerReason {
	case persona.EndCallerHangup:
		return StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote
	case persona.EndAssistantHangup:
		return StatusEnded, call.ReasonAssistantHangup, call.EndedByAssistant
	case persona.EndMediaFailed:
		// Media never flowed both ways: the call did not connect.
		return StatusFailed, call.ReasonMediaFailed, call.EndedByAssistant
	case persona.EndRoomClosed:
		return StatusEnded, call.ReasonRoomClosed, call.EndedBySystem
	case persona.EndTerminated:
		return StatusEnded, call.ReasonAssistantError, call.EndedBySystem
	case persona.EndCallerAbsent:
		// A web call's client never came: the sweeper's join timeout, seen by the worker.
		return StatusFailed, call.ReasonJoinTimeout, call.EndedBySystem
	case persona.EndSilenceTimeout:
		return StatusEnded, call.ReasonSilenceTimeout, call.EndedByAssistant
	case persona.EndMaxDuration:
		// The version's limit: the assistant said so and hung up.
		return StatusEnded, call.ReasonMaxDuration, call.EndedByAssistant
	}
	// worker_shutdown, error, and reasons newer than this code.
	return StatusEnded, call.ReasonAssistantError, call.EndedByAssistant
}

// applyReport merges a report's metrics and transcript into the call and reports whether
// anything changed. Once the call is over only what the record lacks is filled in. The
// ended report is the last one with the conversation: the record is then complete
// (ReportReceived); a recorded call's recording report comes after it, and the one that
// makes the recording available returns recording.ready (created at), to be written in
// the same conditional write: a redelivered or concurrent report finds it available and
// adds none, so the event goes out once per call.
func applyReport(c *call.Call, rep persona.Report, at time.Time) (bool, []callevent.Event) {
	var evts []callevent.Event
	before, _ := json.Marshal([]any{c.Metrics, c.Transcript, c.AssistantReport, c.Usage, c.Analysis, c.Recording, c.AMD, c.ResponseSamplesMS})
	if c.Over() {
		c.Metrics = mergeMetrics(rep.Metrics, derefMetrics(c.Metrics))
		if len(c.Transcript) == 0 && len(rep.Transcript) > 0 {
			c.Transcript = rep.Transcript
		}
	} else {
		c.Metrics = mergeMetrics(derefMetrics(c.Metrics), rep.Metrics)
		if len(rep.Transcript) > 0 {
			c.Transcript = rep.Transcript
		}
	}
	if rep.Kind == persona.ReportEnded {
		c.AssistantReport = call.ReportReceived
		if !c.QualityCounted && len(rep.ResponseSamplesMS) > 0 {
			// The version's quality aggregate counts them with the call, once, in the
			// write that saves this report (call.TakeQualityDue).
			c.ResponseSamplesMS = slices.Clone(rep.ResponseSamplesMS)
		}
		if rep.Usage != nil && !c.AnalysisFinal() {
			// Once analysed, the analysis report's usage (the ended one's and the
			// analysis's tokens) stands; a redelivered ended report does not undo it.
			c.CountUsage(*rep.Usage)
		}
		if a := rep.Analysis; a != nil && a.Status == persona.AnalysisPending && c.Analysis == nil {
			c.Analysis = &call.Analysis{Status: persona.AnalysisPending} // the analysis report follows
		}
	}
	applyAMD(c, rep.AMD)
	if rep.Kind == persona.ReportRecording {
		if _, ready := c.RecordingReported(rep.Recording); ready {
			evts = append(evts, c.RecordingReadyEvent(newEventID(), at))
		}
	}
	// A call whose data was deleted keeps none a late report brings.
	c.RedactAgain()
	after, _ := json.Marshal([]any{c.Metrics, c.Transcript, c.AssistantReport, c.Usage, c.Analysis, c.Recording, c.AMD, c.ResponseSamplesMS})
	return string(before) != string(after), evts
}

// applyAMD keeps the answering-machine detection's decision: the first one reported
// stands (the amd report's, else the ended one's), and the ended report adds whether
// the voicemail message was left. The one change a decision may make is the worker's
// revision of a voicemail box by its greeting's length to a screening assistant by its
// words (mediafleet/amd, Detector.Hint): it replaces the voicemail, and a redelivered
// first report changes nothing back. A result the record cannot name is dropped.
func applyAMD(c *call.Call, a *persona.AMDResult) {
	if a == nil || !slices.Contains(persona.AMDResults, a.Result) {
		return
	}
	if c.AMD == nil {
		v := *a
		c.AMD = &v
		return
	}
	if c.AMD.Result == persona.AnsweredVoicemail && (c.AMD.Reason == "long_greeting" || c.AMD.Reason == "bound") &&
		a.Result == persona.AnsweredScreening && a.Reason == amdReasonWords {
		v := *a
		v.MessageLeft = c.AMD.MessageLeft
		c.AMD = &v
		return
	}
	if a.MessageLeft && !c.AMD.MessageLeft {
		c.AMD.MessageLeft = true
	}
}

// amdReasonWords is mediafleet/amd's ReasonWords: decided by the recogniser's words
// (long_greeting and bound: by the greeting's length, the ones words may revise).
const amdReasonWords = "words"

func derefMetrics(m *persona.Metrics) persona.Metrics {
	if m == nil {
		return persona.Metrics{}
	}
	return *m
}

// mergeMetrics is base with every metric over set; nil when none is set.
func mergeMetrics(base, over persona.Metrics) *persona.Metrics {
	m := base
	// Every field is a pointer; a later report's value replaces an earlier one.
	mv, ov := reflect.ValueOf(&m).Elem(), reflect.ValueOf(over)
	for i := range mv.NumField() {
		if f := ov.Field(i); !f.IsNil() {
			mv.Field(i).Set(f)
		}
	}
	if reflect.ValueOf(m).IsZero() {
		return nil
	}
	return &m
}
