package session

// Where a line may call (shared/destination), applied at every place a real network is
// dialled: a session's dial (record, create.go) and a transfer (startTransfer,
// transfer.go: the API's and the assistant's transfer_call alike). A platform that takes
// test keys (the sim, web calls) places no real call, and is not asked.

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/destination"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// DefaultDailyOutboundMinutes caps an account's outbound minutes per UTC day unless the
// operator gives it its own cap (`bridgeline admin account limits --daily-outbound-minutes`):
// ten hours, half an hour of each of the default 20 concurrent sessions.
const DefaultDailyOutboundMinutes = 600

// TransferMinutes is what one transfer counts against the daily cap: the transferred leg
// runs on the provider after the REFER, and no platform reports its length to
// Bridgeline, so each transfer counts as a call of this length (pending transfers while
// they ring, completed ones in the day's usage).
const TransferMinutes = 10

// maxLivePages bounds the pages of live calls read for the cap (100 each).
const maxLivePages = 100

// checkDestination refuses a dial or transfer to to from line l that the destination
// policy refuses (403 destination_not_allowed on param): a premium range, a country the
// line may not call, the account's daily outbound minutes used up.
func (s *Service) checkDestination(ctx context.Context, accountID string, l line.Line, param, to string) error {
	a, err := s.accounts.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("get account %s: %w", accountID, err)
	}
	p := destination.For(l.ID, l.Handle, l.AllowedDestinationCountries, a.AllowedDestinationCountries)
	if err := p.Check(param, to); err != nil {
		return err
	}
	limit := s.dailyOutboundMinutes(a)
	used, err := s.OutboundMinutesToday(ctx, accountID)
	if err != nil {
		return err
	}
	if used >= float64(limit) {
		return apierr.Param(apierr.CodeDestinationNotAllowed, param, fmt.Sprintf(
			"%s not dialled: the account's daily outbound minutes cap is reached (%.0f of %d minutes used on %s UTC, outbound calls and transfers); it resets at 00:00 UTC, or the operator raises it",
			to, used, limit, usage.Date(s.now())))
	}
	return nil
}

// dailyOutboundMinutes is the account's cap: its own, else the deployment's.
func (s *Service) dailyOutboundMinutes(a account.Account) int {
	if a.DailyOutboundMinutes != nil {
		return *a.DailyOutboundMinutes
	}
	return s.set.DailyOutboundMinutes
}

// OutboundMinutesToday is what the account's daily outbound minutes cap counts on
// today's UTC date: the outbound calls on real networks that ended (their length, from
// the day's usage) and those under way (their length so far), and TransferMinutes for
// each transfer completed today or pending now. Calls count on the day they started, as
// GET /v1/usage counts them.
func (s *Service) OutboundMinutesToday(ctx context.Context, accountID string) (float64, error) {
	now := s.now()
	days, err := s.usage.UsageDays(ctx, accountID, []string{usage.Date(now)})
	if err != nil {
		return 0, fmt.Errorf("usage of %s: %w", accountID, err)
	}
	var ms int64
	for _, d := range days {
		ms += d.OutboundDurationMS + d.Transfers*int64(TransferMinutes*time.Minute/time.Millisecond)
	}
	q := call.ListQuery{Query: listing.Query{Limit: listing.MaxLimit}, Status: call.StatusActive}
	for range maxLivePages {
		page, err := s.records.ListCalls(ctx, accountID, q)
		if err != nil {
			return 0, fmt.Errorf("live calls of %s: %w", accountID, err)
		}
		more := len(page) > q.Limit
		if more {
			page = page[:q.Limit]
		}
		for _, c := range page {
			if c.OnNetwork && c.Direction == call.Outbound && c.AnsweredAt != nil {
				ms += max(0, now.Sub(*c.AnsweredAt).Milliseconds())
			}
			if transferPending(c) {
				ms += int64(TransferMinutes * time.Minute / time.Millisecond)
			}
		}
		if !more || len(page) == 0 {
			break
		}
		q.StartingAfter = page[len(page)-1].ID
	}
	return float64(ms) / float64(time.Minute/time.Millisecond), nil
}
