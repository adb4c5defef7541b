package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// TransferTimeout bounds a transfer: the destination rings (LiveKit waits 30 s for it).
const TransferTimeout = 40 * time.Second

// TransferStale is how long after its request a pending transfer stops holding the call:
// its outcome never came (the process that waited for it stopped), and a new transfer
// may be asked for.
const TransferStale = TransferTimeout + 20*time.Second

// Transfer hands the account's live call to another party on its platform (SIP REFER);
// by is who asked (the customer through the API, or the assistant's transfer_call
// tool). It answers at once with the record's transfer pending: the destination rings
// for up to TransferTimeout, longer than an API request may wait. The outcome lands in
// the record: completed and the call ended as transferred when the destination
// answered (or the party left the room for it after the REFER), failed with the reason
// when the destination refused or did not answer, the call going on.
//
// Errors: resource_not_found; transfer_not_supported on a platform that cannot transfer
// (the sim); call_not_active for a call that is ringing or over, or has a transfer under
// way.
//
// With a TransferQueue (WithTransferQueue) the transfer is handed to it, and another
// process runs it (RunTransfer); a transfer the queue does not take is recorded failed
// and answered upstream_unavailable. Otherwise it runs after the answer (WithLater).
//
// A transfer that fails once under way, of a call an assistant handles, is also told to
// the call's room (persona.TransferNotice): the assistant tells the caller, who is not
// left in silence.
func (s *Service) Transfer(ctx context.Context, accountID, callID, to, by string) (call.Call, error) {
	c, run, err := s.startTransfer(ctx, accountID, callID, to, by, true)
	if err != nil {
		return call.Call{}, err
	}
	if q := s.set.TransferQueue; q != nil {
		if err := s.queue(ctx, q, c); err != nil {
			return call.Call{}, err
		}
		return c, nil
	}
	s.later(func() { run(context.WithoutCancel(ctx)) })
	return c, nil
}

// queue hands a transfer startTransfer recorded pending to the TransferQueue; a job the
// queue refuses leaves the transfer failed (no notice: the call was not touched) and is
// upstream_unavailable.
func (s *Service) queue(ctx context.Context, q TransferQueue, c call.Call) error {
	job := TransferJob{CallID: c.ID, RequestedAt: c.Transfer.RequestedAt}
	if err := q.EnqueueTransfer(ctx, job); err != nil {
		s.transferFailed(context.WithoutCancel(ctx), c.SessionID, c.ID, job.RequestedAt, "the transfer could not be started", false)
		return upstream("the transfer could not be queued", err)
	}
	return nil
}

// TransferJob names an API transfer recorded pending and not run yet: what RunTransfer
// needs in another process.
type TransferJob struct {
	CallID string `json:"call_id"`
	// RequestedAt is the pending transfer's request time, which tells it from a later one.
	RequestedAt time.Time `json:"requested_at"`
}

// TransferQueue takes pending API transfers to run elsewhere (on AWS an SQS queue that
// the call-transfers function reads: a transfer waits up to TransferTimeout, longer than
// the API's function may run).
type TransferQueue interface {
	EnqueueTransfer(ctx context.Context, job TransferJob) error
}

// RunTransfer runs a transfer Transfer queued and records its outcome, as Transfer does
// after its answer without a queue. A job whose transfer is no longer pending (run
// already, or replaced by a later one) does nothing, so a redelivered job is harmless;
// one that waited past TransferStale is recorded failed without a REFER (the caller has
// long been told nothing happened). The error is the outcome's, as startTransfer's run
// returns it, or a store failure.
func (s *Service) RunTransfer(ctx context.Context, job TransferJob) error {
	c, err := s.records.GetCall(ctx, job.CallID)
	if errors.Is(err, apierr.ErrNotFound) {
		s.log().Warn("queued transfer of an unknown call", "call_id", job.CallID)
		return nil
	}
	if err != nil {
		return err
	}
	if !transferPending(c) || !c.Transfer.RequestedAt.Equal(job.RequestedAt) {
		return nil
	}
	if s.now().After(job.RequestedAt.Add(TransferStale)) {
		s.transferFailed(ctx, c.SessionID, c.ID, job.RequestedAt, "the transfer could not be started in time", true)
		return nil
	}
	plat, _ := s.set.Platforms.Lookup(c.Platform)
	tr, ok := plat.(platform.Transferer)
	if !ok {
		s.transferFailed(ctx, c.SessionID, c.ID, job.RequestedAt, "the calling platform cannot transfer calls here", true)
		return fmt.Errorf("run transfer of call %s: platform %q is not registered for transfers in this process", c.ID, c.Platform)
	}
	return s.transferRun(tr, c.SessionID, c.PlatformCallID, c.ID, c.Transfer.To, job.RequestedAt, true)(ctx)
}

// startTransfer checks a transfer and records it pending; run hands the call over and
// records the outcome, returning the error Transfer's callers see when it fails:
// transfer_failed when the destination refused or did not answer, call_not_active when
// the call left meanwhile, upstream_unavailable when the platform did not answer. notify
// is transferRun's.
func (s *Service) startTransfer(ctx context.Context, accountID, callID, to, by string, notify bool) (call.Call, func(context.Context) error, error) {
	if err := platform.CheckDestination(to); err != nil {
		return call.Call{}, nil, apierr.Invalid("to", "to must be "+err.Error())
	}
	c, err := s.records.GetCall(ctx, callID)
	if c, err = apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", callID)); err != nil {
		return call.Call{}, nil, err
	}
	plat, ok := s.set.Platforms.Lookup(c.Platform)
	tr, canTransfer := plat.(platform.Transferer)
	if !ok || !plat.CanTransfer() || !canTransfer {
		return call.Call{}, nil, apierr.New(apierr.CodeTransferNotSupported,
			fmt.Sprintf("call %s is on the %s platform, which cannot transfer calls; SIP calls can", c.ID, c.Platform))
	}
	notActive := apierr.New(apierr.CodeCallNotActive, fmt.Sprintf("call %s is not in progress: only an answered call can be transferred", c.ID))
	if c.SessionID == "" || c.Status != call.StatusActive {
		return call.Call{}, nil, notActive
	}
	if !plat.TestKeys() {
		// The destination is dialled on a real network: where the call's line may call.
		l, err := s.lines.GetLine(ctx, c.LineID)
		if err != nil {
			return call.Call{}, nil, fmt.Errorf("get line %s of call %s: %w", c.LineID, c.ID, err)
		}
		if err := s.checkDestination(ctx, accountID, l, "to", to); err != nil {
			return call.Call{}, nil, err
		}
	}
	now := s.now()
	_, c, err = s.mutate(ctx, c.SessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if ses.Over() || c.Status != call.StatusActive {
			return nil, false, notActive
		}
		if transferPending(*c) && now.Before(c.Transfer.RequestedAt.Add(TransferStale)) {
			return nil, false, apierr.New(apierr.CodeCallNotActive,
				fmt.Sprintf("call %s has a transfer to %s under way: wait for its outcome in the record", c.ID, c.Transfer.To))
		}
		c.Transfer = &call.Transfer{To: to, Status: call.TransferPending, RequestedAt: now, By: by}
		return nil, true, nil
	})
	if err != nil {
		return call.Call{}, nil, err
	}
	return c, s.transferRun(tr, c.SessionID, c.PlatformCallID, callID, to, now, notify), nil
}

// transferFailed records a pending transfer's failure, unless it is no longer that
// transfer (completed by the party leaving, or another transfer's); a store failure is
// logged (the pending transfer goes stale on its own). With notify, a call an assistant
// handles is told in its room (notifyFailed).
func (s *Service) transferFailed(ctx context.Context, sessionID, callID string, requestedAt time.Time, failure string, notify bool) {
	recorded := false
	_, c, err := s.mutate(ctx, sessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if !transferPending(*c) || !c.Transfer.RequestedAt.Equal(requestedAt) {
			return nil, false, nil
		}
		c.Transfer.Status, c.Transfer.Failure = call.TransferFailed, failure
		recorded = true
		return nil, true, nil
	})
	if err != nil {
		s.log().Error("record a failed transfer", "call_id", callID, "err", err)
		return
	}
	if notify && recorded {
		s.notifyFailed(ctx, sessionID, c)
	}
}

// notifyFailed tells the room of a call an assistant handles that its transfer failed
// (persona.TransferNotice on persona.TransferTopic): the worker says so to the caller,
// and one waiting for its own queued transfer learns the outcome. Once: a notice that
// does not go out is logged (the worker that asked gives up waiting on its own).
func (s *Service) notifyFailed(ctx context.Context, room string, c call.Call) {
	if c.HandledBy != call.HandledByAssistant || c.Transfer == nil || c.Status != call.StatusActive {
		return
	}
	body, err := json.Marshal(persona.TransferNotice{CallID: c.ID, To: c.Transfer.To, Status: persona.TransferFailed,
		Failure: c.Transfer.Failure, By: c.Transfer.By, RequestedAt: c.Transfer.RequestedAt})
	if err == nil {
		err = s.rooms.SendData(ctx, room, persona.TransferTopic, body)
	}
	if err != nil {
		s.log().Error("tell the assistant a transfer failed", "call_id", c.ID, "err", err)
	}
}

// transferRun hands the call over and records the outcome: see startTransfer.
//
// With notify, a failure is also told to the room of a call an assistant handles
// (notifyFailed); without, the asker hears it in the error (the worker's own transfer
// on the local stack).
func (s *Service) transferRun(tr platform.Transferer, sessionID, platformCallID, callID, to string, requestedAt time.Time, notify bool) func(context.Context) error {
	notActive := apierr.New(apierr.CodeCallNotActive, fmt.Sprintf("call %s is not in progress: only an answered call can be transferred", callID))
	return func(ctx context.Context) error {
		// Not cut short by the asker going away: the caller leaving for the destination is
		// how a transfer completes (the worker that asked ends with the call).
		tctx, cancel := context.WithTimeout(ctx, TransferTimeout)
		defer cancel()
		err := tr.Transfer(tctx, platform.Transfer{PlatformCallID: platformCallID, CallID: callID, Room: sessionID, To: to})
		var reported *platform.TransferReported
		if err == nil || errors.As(err, &reported) {
			// The transfer went through: the call ends as transferred, and one the
			// platform reported an error for says which in its record.
			var rerr string
			if reported != nil {
				rerr = reported.Err.Error()
				s.log().Warn("transfer went through despite the platform's error", "call_id", callID, "to", to, "err", reported.Err)
			}
			_, err = s.transferred(ctx, sessionID, requestedAt, rerr)
			return err
		}
		s.log().Warn("transfer failed", "call_id", callID, "to", redact.Number(to), "err", err)
		failure := "the destination refused the transfer or did not answer"
		switch {
		case errors.Is(err, platform.ErrUnknownCall):
			failure = "the call was no longer in progress"
		case !errors.Is(err, platform.ErrTransferFailed):
			failure = "the calling platform did not answer"
		}
		s.transferFailed(ctx, sessionID, callID, requestedAt, failure, notify)
		switch {
		case errors.Is(err, platform.ErrUnknownCall):
			return notActive
		case errors.Is(err, platform.ErrTransferFailed):
			return apierr.New(apierr.CodeTransferFailed, fmt.Sprintf("transfer of call %s to %s failed: %s; the call goes on", callID, to, failure))
		}
		return upstream("the calling platform could not transfer the call", err)
	}
}

// AssistantTransfer is the assistant's transfer_call tool: the call's worker asks to hand
// the call to one of the destinations its version lists (never anywhere else: the model
// chose it, and a caller may talk a model into anything). Without a TransferQueue it
// returns once the transfer's outcome is known, with startTransfer's errors. With one
// (AWS, where a request may not wait for a phone to ring) it queues the transfer as
// Transfer does and returns pending: the worker learns a failure from the room
// (notifyFailed) and a success by the caller leaving; a job the queue refuses is
// upstream_unavailable at once.
func (s *Service) AssistantTransfer(ctx context.Context, callID, to string) (pending bool, err error) {
	c, err := s.records.GetCall(ctx, callID)
	if errors.Is(err, apierr.ErrNotFound) {
		return false, apierr.NotFound("call", callID)
	}
	if err != nil {
		return false, err
	}
	ses, err := s.records.GetSession(ctx, c.SessionID)
	if err != nil {
		return false, fmt.Errorf("get session %s: %w", c.SessionID, err)
	}
	if ses.VersionID == "" {
		// Not an assistant's call: no version lists where it may go.
		return false, apierr.Invalid("call_id", fmt.Sprintf("call %s runs no assistant version, so it has no transfer destinations", callID))
	}
	v, err := s.assistants.GetVersion(ctx, ses.VersionID)
	if err != nil {
		return false, fmt.Errorf("get version %s: %w", ses.VersionID, err)
	}
	listed := false
	for _, d := range v.TransferDestinations {
		listed = listed || d.To == to
	}
	if !listed {
		return false, apierr.Invalid("to", fmt.Sprintf("%s is not one of the transfer destinations of version %s", to, v.ID))
	}
	c, run, err := s.startTransfer(ctx, c.AccountID, callID, to, TransferBy(true), false)
	if err != nil {
		return false, err
	}
	if q := s.set.TransferQueue; q != nil {
		if err := s.queue(ctx, q, c); err != nil {
			return false, err
		}
		return true, nil
	}
	// The worker waits for the outcome: on a failure its model tells the caller.
	return false, run(context.WithoutCancel(ctx))
}

// transferred ends a session whose call's transfer completed: the transfer is recorded
// completed and the call ends with end_reason transferred, by whoever asked for it. It
// is the transfer's own end when the platform answered, and the end of a call whose
// party left while its transfer was pending (the platform's hang-up notification may
// come before its answer to the transfer). reported is the error the platform reported
// for a transfer that went through anyway (platform.TransferReported), kept as the
// record's reported_error; requestedAt names the transfer (zero: whichever is pending).
func (s *Service) transferred(ctx context.Context, sessionID string, requestedAt time.Time, reported string) (call.Call, error) {
	by := call.EndedByCustomer
	_, c, err := s.mutate(ctx, sessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if !transferPending(*c) || (!requestedAt.IsZero() && !c.Transfer.RequestedAt.Equal(requestedAt)) {
			return nil, false, nil
		}
		c.Transfer.Status, c.Transfer.ReportedError = call.TransferCompleted, reported
		return nil, true, nil
	})
	if err != nil {
		return c, err
	}
	if c.Transfer != nil && c.Transfer.By == call.EndedByAssistant {
		by = call.EndedByAssistant
	}
	_, c, _, err = s.endIf(ctx, sessionID, live, StatusEnded, call.ReasonTransferred, by)
	return c, err
}

// transferPending reports whether a call's latest transfer is under way.
func transferPending(c call.Call) bool {
	return c.Transfer != nil && c.Transfer.Status == call.TransferPending
}

// TransferBy names who asked for a transfer, for Transfer's by: the customer's API
// request or the assistant's tool.
func TransferBy(assistant bool) string {
	if assistant {
		return call.EndedByAssistant
	}
	return call.EndedByCustomer
}
