package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// job is the dispatch metadata for an assistant call: the version fixed now. A web
// call's job names its caller's client and when it must join by; its answer is that
// client joining, after the dispatch (answeredAt is zero).
func (s *Service) job(ctx context.Context, ses Session, c call.Call, v assistant.Version, answeredAt time.Time) (string, error) {
	acct, err := s.accounts.GetAccount(ctx, c.AccountID)
	if err != nil {
		return "", fmt.Errorf("get account %s: %w", c.AccountID, err)
	}
	caller, joinBy := platform.ParticipantIdentity, time.Time{}
	if ses.WebCall() {
		caller, joinBy = ses.Caller, s.joinDeadline(ses)
	}
	greeting, prompt, within := v.RenderedWithin(c.Variables)
	if !within {
		// Values checked nowhere (a line's defaults changed after the version was
		// published) rendered past a field limit: the worker gets the texts cut to it.
		s.log().Warn("rendered text cut to its limit", "call_id", c.ID, "version_id", v.ID)
	}
	j := persona.Job{CallID: c.ID, SessionID: c.SessionID, AccountID: c.AccountID, Media: c.Media,
		CallerIdentity: caller, AnsweredAt: answeredAt, JoinBy: joinBy,
		Brand: brand(acct),
		// The worker gets finished text: the placeholders are rendered here, with the
		// values fixed on the call when it was answered.
		Version: persona.Version{AssistantID: v.AssistantID, ID: v.ID, Number: v.Number, Name: v.Name,
			SystemPrompt: prompt, Greeting: greeting, AvatarID: v.AvatarID,
			Framing: persona.Framing{Shot: v.Framing.Shot, Position: v.Framing.Position}, Voice: v.Voice, Model: v.Model, Language: v.Language,
			TransferDestinations: v.TransferDestinations, CallSettings: callSettings(v.CallSettings)},
		TranscriptEvents: s.wantsTranscript(ctx, c.AccountID),
		Recording:        ses.RecordingOf(v) == assistant.RecordingAudio, AMD: ses.AMD}
	b, err := json.Marshal(j)
	return string(b), err
}

// brand is what the connecting screen shows of the account: the logo by its hash (the
// worker reads the file itself, persona.AvatarPath).
func brand(acct account.Account) persona.Brand {
	b := persona.Brand{Name: acct.Name, Color: acct.BrandColor}
	if acct.Logo != nil {
		b.Logo = acct.Logo.SHA256
	}
	return b
}

// callSettings are a version's call settings as its worker runs them: the tools without
// their URLs (the worker asks the control plane to call one: persona.ToolPath).
func callSettings(c assistant.CallSettings) persona.CallSettings {
	out := persona.CallSettings{IdleTimeoutSeconds: int(c.IdleTimeout() / time.Second), Analysis: c.Analysis,
		NoiseSuppressionOff: c.NoiseSuppressionOff, Vision: c.Vision}
	if c.Interruption != nil {
		in := c.InterruptionOf()
		out.Interruption = &in
	}
	if c.MaxDurationSeconds != nil {
		out.MaxDurationSeconds = *c.MaxDurationSeconds
	}
	for _, t := range c.Tools {
		out.Tools = append(out.Tools, persona.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, TimeoutMS: t.TimeoutMS})
	}
	return out
}

// wantsTranscript: an enabled endpoint of the account subscribes to call.transcript now.
// A failed read only costs this call its transcript events; it never fails the call.
func (s *Service) wantsTranscript(ctx context.Context, accountID string) bool {
	if s.set.Subscriptions == nil {
		return false
	}
	ok, err := s.set.Subscriptions.Wants(ctx, accountID, callevent.TypeCallTranscript)
	if err != nil {
		s.log().Error("read call.transcript subscriptions; the call sends none", "account_id", accountID, "err", err)
	}
	return ok
}

// dispatchAssistant asks LiveKit for the assistant's job in an answered assistant
// session's room, with the version fixed on the session: the one path every assistant
// call takes to a persona worker (an outbound call once the callee answered, an inbound
// call on an assistant line once bridged, a customer_decides call handed over, a web
// call as it is created, before its caller joins), and only once, by the write that
// answered the call (a web call's create). A dispatch that fails ends the session with
// assistant_unavailable; one LiveKit drops silently is the dispatch watchdog's (Sweep).
func (s *Service) dispatchAssistant(ctx context.Context, ses Session, c call.Call) error {
	_, err := s.tryDispatch(ctx, ses, c)
	return err
}

// tryDispatch is dispatchAssistant that also reports whether LiveKit took the dispatch:
// a refused one ends the session, and the error is then the end's (nil when it ended).
func (s *Service) tryDispatch(ctx context.Context, ses Session, c call.Call) (bool, error) {
	v, err := s.assistants.GetVersion(ctx, ses.VersionID)
	if err != nil {
		return false, fmt.Errorf("get version %s: %w", ses.VersionID, err)
	}
	if v.AssistantID == "" {
		v.AssistantID = ses.AssistantID
	}
	var answeredAt time.Time // a web call's is its caller joining, after the dispatch
	if !ses.WebCall() {
		answeredAt = s.now()
		if c.AnsweredAt != nil {
			answeredAt = *c.AnsweredAt
		}
	}
	job, err := s.job(ctx, ses, c, v, answeredAt)
	if err == nil {
		err = s.rooms.Dispatch(ctx, ses.ID, rtc.AgentDispatch{AgentName: persona.AgentName, Metadata: job})
	}
	if err != nil {
		s.log().Error("dispatch assistant", "session_id", ses.ID, "err", err)
		_, _, err = s.end(ctx, ses.ID, StatusFailed, call.ReasonAssistantUnavailable, call.EndedBySystem)
		return false, err
	}
	return true, nil
}

// calleeAnswered marks an outbound session answered (answered dispatches its assistant).
// A callee who answers a session that ended meanwhile (deleted while it rang, or failed
// when the dial's answer was lost) is hung up.
func (s *Service) calleeAnswered(ctx context.Context, plat platform.Platform, sessionID, pcid, media string) error {
	ses, c, won, err := s.answered(ctx, sessionID, func(c *call.Call) {
		notePlatformID(c, pcid)
		if media == platform.MediaAudio {
			c.Media = platform.MediaAudio // rung with video, answered audio only
		}
	})
	if err == nil && !won && ses.Over() && pcid != "" {
		if err := ignoreGone(plat.Hangup(ctx, pcid)); err != nil {
			s.log().Error("hang up a call answered after its session ended", "call_id", c.ID, "err", err)
		}
	}
	return err
}

// answerWithAssistant answers an inbound call with the line's assistant: the call is
// recorded with the version fixed now, a room made, and the caller bridged in (answered
// dispatches the assistant).
func (s *Service) answerWithAssistant(ctx context.Context, plat platform.Platform, c call.Call, v assistant.Version) error {
	ses := s.inboundSession(c)
	ses.Mode, ses.AssistantID, ses.VersionID = ModeAssistant, v.AssistantID, v.ID
	c.SessionID, c.HandledBy, c.AssistantID, c.VersionID = ses.ID, call.HandledByAssistant, v.AssistantID, v.ID
	c.Record(ses.RecordingOf(v) == assistant.RecordingAudio)
	// Recorded before the room exists, so the worker's first report finds the call.
	if err := s.saveNew(ctx, &ses, c); err != nil {
		if errors.Is(err, apierr.ErrConflict) {
			return nil
		}
		if isOverLimit(err) {
			return s.declineOverLimit(ctx, plat, c)
		}
		return fmt.Errorf("record inbound call: %w", err)
	}
	if err := s.createRoom(ctx, rtc.RoomSpec{Name: ses.ID}); err != nil {
		s.log().Error("create room", "session_id", ses.ID, "err", err)
		_, _, endErr := s.end(ctx, ses.ID, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
		return errors.Join(ignoreGone(platform.RejectCall(ctx, plat, c.PlatformCallID, c.ID, "media unavailable")), endErr)
	}
	return s.bridge(ctx, plat, ses, c, nil)
}

// handToAssistant gives a ringing customer_decides call to the line's assistant (the
// customer answered assistant, or did not answer in time): the session takes the
// version, the call the variables resolved for it, and the caller is bridged in
// (answered dispatches the assistant).
func (s *Service) handToAssistant(ctx context.Context, plat platform.Platform, sessionID string, v assistant.Version, values map[string]string) error {
	ses, c, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if ses.Over() {
			return nil, false, nil
		}
		ses.Mode, ses.AssistantID, ses.VersionID = ModeAssistant, v.AssistantID, v.ID
		c.HandledBy, c.AssistantID, c.VersionID = call.HandledByAssistant, v.AssistantID, v.ID
		c.Record(ses.RecordingOf(v) == assistant.RecordingAudio)
		c.Variables = values
		return nil, true, nil
	})
	if err != nil || ses.Over() {
		return err
	}
	err = s.bridge(ctx, plat, ses, c, nil)
	// A client that joined with call.incoming's token while the call rang may publish;
	// from now on it only watches (one joining later is caught by its join webhook). After
	// the bridge, so that the caller is never kept waiting for it, and bounded, so that it
	// fits the time a request keeps after the decision (one LiveKit call's worth).
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), WatchOnlyTimeout)
	defer cancel()
	if werr := s.watchOnly(wctx, ses.ID); werr != nil {
		s.log().Error("make customer clients watch-only", "session_id", ses.ID, "err", werr)
	}
	return err
}
