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

// Transfer hands the account's live call to another party on its platform (SIP REFER)
// and ends it as transferred once the destination answered; by is who asked (the
// customer through the API, or the assistant's transfer_call tool).
//
// Errors: resource_not_found; transfer_not_supported on a platform that cannot transfer
// (the sim); call_not_active for a call that is ringing or over, or has a transfer under
// way; transfer_failed when the destination refused or did not answer (the call goes on,
// and its record keeps the failed transfer); upstream_unavailable when the platform did
// not answer.
func (s *Service) Transfer(ctx context.Context, accountID, callID, to, by string) (call.Call, error) {
	if err := platform.CheckDestination(to); err != nil {
		return call.Call{}, apierr.Invalid("to", "to must be "+err.Error())
	}
	c, err := s.records.GetCall(ctx, callID)
	if c, err = apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", callID)); err != nil {
		return call.Call{}, err
	}
	plat, ok := s.set.Platforms.Lookup(c.Platform)
	tr, canTransfer := plat.(platform.Transferer)
	if !ok || !plat.CanTransfer() || !canTransfer {
		return call.Call{}, apierr.New(apierr.CodeTransferNotSupported,
			fmt.Sprintf("call %s is on the %s platform, which cannot transfer calls; SIP calls can", c.ID, c.Platform))
	}
	notActive := apierr.New(apierr.CodeCallNotActive, fmt.Sprintf("call %s is not in progress: only an answered call can be transferred", c.ID))
	if c.SessionID == "" || c.Status != call.StatusActive {
		return call.Call{}, notActive
	}
	now := s.now()
	_, c, err = s.mutate(ctx, c.SessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if ses.Over() || c.Status != call.StatusActive || (c.Transfer != nil && c.Transfer.Status == call.TransferPending) {
			return nil, false, notActive
		}
		c.Transfer = &call.Transfer{To: to, Status: call.TransferPending, RequestedAt: now, By: by}
		return nil, true, nil
	})
	if err != nil {
		return call.Call{}, err
	}
	// The transfer is not cut short by the asker going away: the caller leaving for the
	// destination is how it completes (the worker that asked ends with the call).
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), TransferTimeout)
	defer cancel()
	err = tr.Transfer(tctx, platform.Transfer{PlatformCallID: c.PlatformCallID, CallID: c.ID, Room: c.SessionID, To: to})
	if err == nil {
		c, err = s.transferred(context.WithoutCancel(ctx), c.SessionID)
		return c, err
	}
	s.log().Warn("transfer failed", "call_id", c.ID, "to", to, "err", err)
	failure := "the destination refused the transfer or did not answer"
	switch {
	case errors.Is(err, platform.ErrUnknownCall):
		failure = "the call was no longer in progress"
	case !errors.Is(err, platform.ErrTransferFailed):
		failure = "the calling platform did not answer"
	}
	_, c, merr := s.mutate(context.WithoutCancel(ctx), c.SessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if c.Transfer == nil || c.Transfer.Status != call.TransferPending {
			return nil, false, nil
		}
		c.Transfer.Status, c.Transfer.Failure = call.TransferFailed, failure
		return nil, true, nil
	})
	if merr != nil {
		s.log().Error("record a failed transfer", "call_id", c.ID, "err", merr)
	}
	switch {
	case errors.Is(err, platform.ErrUnknownCall):
		return c, notActive
	case errors.Is(err, platform.ErrTransferFailed):
		return c, apierr.New(apierr.CodeTransferFailed, fmt.Sprintf("transfer of call %s to %s failed: %s; the call goes on", c.ID, to, failure))
	}
	return c, upstream("the calling platform could not transfer the call", err)
}

// AssistantTransfer is the assistant's transfer_call tool: the call's worker asks to hand
// the call to one of the destinations its version lists (never anywhere else: the model
// chose it, and a caller may talk a model into anything). Errors as Transfer's.
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
	_, err = s.Transfer(ctx, c.AccountID, callID, to, TransferBy(true))
	return err
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
