package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/platform"
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
func (s *Service) Transfer(ctx context.Context, accountID, callID, to, by string) (call.Call, error) {
	c, run, err := s.startTransfer(ctx, accountID, callID, to, by)
	if err != nil {
		return call.Call{}, err
	}
	s.later(func() { run(context.WithoutCancel(ctx)) })
	return c, nil
}

// startTransfer checks a transfer and records it pending; run hands the call over and
// records the outcome, returning the error Transfer's callers see when it fails:
// transfer_failed when the destination refused or did not answer, call_not_active when
// the call left meanwhile, upstream_unavailable when the platform did not answer.
func (s *Service) startTransfer(ctx context.Context, accountID, callID, to, by string) (call.Call, func(context.Context) error, error) {
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
	sessionID, platformCallID := c.SessionID, c.PlatformCallID
	run := func(ctx context.Context) error {
		// Not cut short by the asker going away: the caller leaving for the destination is
		// how a transfer completes (the worker that asked ends with the call).
		tctx, cancel := context.WithTimeout(ctx, TransferTimeout)
		defer cancel()
		err := tr.Transfer(tctx, platform.Transfer{PlatformCallID: platformCallID, CallID: callID, Room: sessionID, To: to})
		if err == nil {
			_, err = s.transferred(ctx, sessionID)
			return err
		}
		s.log().Warn("transfer failed", "call_id", callID, "to", to, "err", err)
		failure := "the destination refused the transfer or did not answer"
		switch {
		case errors.Is(err, platform.ErrUnknownCall):
			failure = "the call was no longer in progress"
		case !errors.Is(err, platform.ErrTransferFailed):
			failure = "the calling platform did not answer"
		}
		_, _, merr := s.mutate(ctx, sessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
			if !transferPending(*c) || !c.Transfer.RequestedAt.Equal(now) {
				return nil, false, nil // completed by the party leaving, or another transfer's
			}
			c.Transfer.Status, c.Transfer.Failure = call.TransferFailed, failure
			return nil, true, nil
		})
		if merr != nil {
			s.log().Error("record a failed transfer", "call_id", callID, "err", merr)
		}
		switch {
		case errors.Is(err, platform.ErrUnknownCall):
			return notActive
		case errors.Is(err, platform.ErrTransferFailed):
			return apierr.New(apierr.CodeTransferFailed, fmt.Sprintf("transfer of call %s to %s failed: %s; the call goes on", callID, to, failure))
		}
		return upstream("the calling platform could not transfer the call", err)
	}
	return c, run, nil
}

// AssistantTransfer is the assistant's transfer_call tool: the call's worker asks to hand
// the call to one of the destinations its version lists (never anywhere else: the model
// chose it, and a caller may talk a model into anything). It returns once the transfer's
// outcome is known, with startTransfer's errors.
func (s *Service) AssistantTransfer(ctx context.Context, callID, to string) error {
	c, err := s.records.GetCall(ctx, callID)
	if errors.Is(err, apierr.ErrNotFound) {
		return apierr.NotFound("call", callID)
	}
	if err != nil {
		return err
	}
	ses, err := s.records.GetSession(ctx, c.SessionID)
	if err != nil {
		return fmt.Errorf("get session %s: %w", c.SessionID, err)
	}
	if ses.VersionID == "" {
		// Not an assistant's call: no version lists where it may go.
		return apierr.Invalid("call_id", fmt.Sprintf("call %s runs no assistant version, so it has no transfer destinations", callID))
	}
	v, err := s.assistants.GetVersion(ctx, ses.VersionID)
	if err != nil {
		return fmt.Errorf("get version %s: %w", ses.VersionID, err)
	}
	listed := false
	for _, d := range v.TransferDestinations {
		listed = listed || d.To == to
	}
	if !listed {
		return apierr.Invalid("to", fmt.Sprintf("%s is not one of the transfer destinations of version %s", to, v.ID))
	}
	// The worker waits for the outcome: on a failure its model tells the caller.
	_, run, err := s.startTransfer(ctx, c.AccountID, callID, to, TransferBy(true))
	if err != nil {
		return err
	}
	return run(context.WithoutCancel(ctx))
}

// transferred ends a session whose call's transfer completed: the transfer is recorded
// completed and the call ends with end_reason transferred, by whoever asked for it. It
// is the transfer's own end when the platform answered, and the end of a call whose
// party left while its transfer was pending (the platform's hang-up notification may
// come before its answer to the transfer).
func (s *Service) transferred(ctx context.Context, sessionID string) (call.Call, error) {
	by := call.EndedByCustomer
	_, c, err := s.mutate(ctx, sessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if c.Transfer == nil || c.Transfer.Status != call.TransferPending {
			return nil, false, nil
		}
		c.Transfer.Status = call.TransferCompleted
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
