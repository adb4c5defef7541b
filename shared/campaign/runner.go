package campaign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Runner timings.
const (
	// DefaultLease is how long one runner dials for a campaign before another may take
	// it over; the lease is renewed every tick.
	DefaultLease = 30 * time.Second
	// DefaultRepairAfter is how long a claimed attempt whose call was never recorded is
	// left alone before it is settled not_placed: well above a session create's bound
	// (session.DefaultCreateTimeout), so a dial in progress is never taken for a crash.
	DefaultRepairAfter = time.Minute
	// WaitForSlot is how long a recipient whose dial met the account's concurrent
	// session limit waits before it is tried again (no attempt counted).
	WaitForSlot = 2 * time.Second
)

// Runner dials the recipients of running campaigns. Every tick it takes the lease of
// each active campaign it can (one conditional write on the campaign), settles the
// attempts whose calls ended (from the call records: the backstop of Service.CallEnded,
// and the repair after a crash), claims due recipients up to the free slots of the
// concurrency cap at the campaign's rate (one conditional write each, which also fails
// once the campaign is no longer running), dials them as outbound assistant sessions,
// and completes a campaign with no recipient left. Several runners may share a store.
type Runner struct {
	Service *Service
	Dialer  Dialer
	// ID names this runner in the campaigns' leases (default a fresh id).
	ID          string
	Lease       time.Duration
	RepairAfter time.Duration

	mu       sync.Mutex
	lastDial map[string]time.Time // by campaign, this runner's last dial
	wake     chan struct{}
}

func (r *Runner) init() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ID == "" {
		r.ID = ident.New("run")
	}
	if r.Lease <= 0 {
		r.Lease = DefaultLease
	}
	if r.RepairAfter <= 0 {
		r.RepairAfter = DefaultRepairAfter
	}
	if r.lastDial == nil {
		r.lastDial = map[string]time.Time{}
	}
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
}

// Wake makes Run tick at once (a call of a campaign ended: its slot is free).
func (r *Runner) Wake() {
	r.init()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run ticks every every (and on Wake) until ctx ends.
func (r *Runner) Run(ctx context.Context, every time.Duration) {
	r.init()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.Service.log().Error("campaign runner tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
		}
	}
}

// Handler is the AWS campaign-runner's handler: each invocation ticks every tick for
// window (an EventBridge schedule invokes it every minute).
func (r *Runner) Handler(window, tick time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		r.init()
		end := time.Now().Add(window)
		for {
			if err := r.Tick(ctx); err != nil {
				return err
			}
			if time.Now().Add(tick).After(end) {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(tick):
			}
		}
	}
}

// Tick works every active campaign once, each in its own goroutine.
func (r *Runner) Tick(ctx context.Context) error {
	r.init()
	var wg sync.WaitGroup
	after := ""
	for {
		page, err := r.Service.Store.ActiveCampaigns(ctx, after, 100)
		if err != nil {
			wg.Wait()
			return fmt.Errorf("active campaigns: %w", err)
		}
		for _, c := range page {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.work(ctx, c); err != nil && ctx.Err() == nil {
					r.Service.log().Error("campaign", "campaign_id", c.ID, "err", err)
				}
			}()
		}
		if len(page) < 100 {
			break
		}
		after = page[len(page)-1].ID
	}
	wg.Wait()
	return nil
}

// lease takes or renews c's lease for this runner; false when another runner holds it
// or the write lost a race.
func (r *Runner) lease(ctx context.Context, c *Campaign) (bool, error) {
	now := r.Service.now()
	if c.LeaseOwner != "" && c.LeaseOwner != r.ID && c.LeaseUntil != nil && c.LeaseUntil.After(now) {
		return false, nil
	}
	until := now.Add(r.Lease)
	c.LeaseOwner, c.LeaseUntil = r.ID, &until
	err := r.Service.Store.UpdateCampaign(ctx, *c, nil)
	if errors.Is(err, apierr.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.Revision++
	return true, nil
}

// work is one tick of one campaign.
func (r *Runner) work(ctx context.Context, c Campaign) error {
	ok, err := r.lease(ctx, &c)
	if err != nil || !ok {
		return err
	}
	calling, err := r.settleCalling(ctx, c)
	if err != nil {
		return err
	}
	switch c.Status {
	case StatusRunning:
		if err := r.dial(ctx, c, calling); err != nil {
			return err
		}
		return r.completeIfDone(ctx, c)
	case StatusCanceled:
		if calling > 0 {
			return nil
		}
		if err := r.Service.cancelPending(ctx, c); err != nil {
			return err
		}
		_, err := r.updateCampaign(ctx, c.ID, func(c *Campaign) bool {
			if c.Status != StatusCanceled || !c.Active {
				return false
			}
			c.Active, c.LeaseOwner, c.LeaseUntil = false, "", nil
			return true
		}, nil)
		return err
	}
	return nil // paused: calls under way are settled, nothing is dialled
}

// settleCalling settles the attempts under way whose call ended or was never recorded,
// and returns how many are still under way.
func (r *Runner) settleCalling(ctx context.Context, c Campaign) (int, error) {
	n := 0
	q := RecipientQuery{Status: RecipientCalling, End: c.listEnd(), Limit: 100}
	for {
		page, err := r.Service.Store.ListRecipients(ctx, c.ID, q)
		if err != nil {
			return 0, err
		}
		more := len(page) > q.Limit
		if more {
			page = page[:q.Limit]
		}
		for _, rc := range page {
			still, err := r.settleOne(ctx, c, rc)
			if err != nil {
				return 0, err
			}
			if still {
				n++
			}
		}
		if !more {
			return n, nil
		}
		q.After = page[len(page)-1].ID
	}
}

// settleOne settles one calling recipient from its call record; true while its call is
// under way (or its dial may still be).
func (r *Runner) settleOne(ctx context.Context, c Campaign, rc Recipient) (bool, error) {
	a := rc.Current()
	if a == nil || a.Outcome != "" {
		return false, nil
	}
	cl, err := r.Service.Calls.GetCall(ctx, a.CallID)
	switch {
	case errors.Is(err, apierr.ErrNotFound):
		if r.Service.now().Sub(a.ClaimedAt) < r.RepairAfter {
			return true, nil // the dial may still be saving its records
		}
		// Claimed, never recorded: the runner stopped between the claim and the dial,
		// whose session is saved before the platform is asked. Nothing was placed.
		settle(c, &rc, OutcomeNotPlaced, "", "", r.Service.now())
		return false, ignoreConflict(r.Service.Store.UpdateRecipient(ctx, rc))
	case err != nil:
		return false, fmt.Errorf("get call %s: %w", a.CallID, err)
	case !cl.Over():
		return true, nil
	}
	settleCall(c, &rc, cl, r.Service.now())
	return false, ignoreConflict(r.Service.Store.UpdateRecipient(ctx, rc))
}

func ignoreConflict(err error) error {
	if errors.Is(err, apierr.ErrConflict) {
		return nil
	}
	return err
}

// dial claims and dials due recipients up to the campaign's free slots, spaced by its
// rate.
func (r *Runner) dial(ctx context.Context, c Campaign, calling int) error {
	now := r.Service.now()
	if !c.RecipientZones && !c.Settings.Window.Open(now) {
		return nil
	}
	free := c.Settings.MaxConcurrentCalls - calling
	if free <= 0 {
		return nil
	}
	due, err := r.due(ctx, c, now, free)
	if err != nil || len(due) == 0 {
		return err
	}
	acct, err := r.Service.Accounts.GetAccount(ctx, c.AccountID)
	if err != nil {
		return fmt.Errorf("get account %s: %w", c.AccountID, err)
	}
	caller := account.Caller{Account: acct, Live: c.Live}
	gap := time.Duration(math.Ceil(float64(time.Second) / c.Settings.CallsPerSecond))
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, rc := range due {
		r.mu.Lock()
		wait := time.Until(r.lastDial[c.ID].Add(gap))
		r.mu.Unlock()
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		claimed := r.Service.now()
		rc.Status, rc.NextAttemptAt = RecipientCalling, nil
		rc.Attempts = append(rc.Attempts, Attempt{CallID: ident.New("call"), ClaimedAt: claimed})
		err := r.Service.Store.ClaimRecipient(ctx, rc)
		if errors.Is(err, apierr.ErrConflict) {
			// Another runner claimed it, or the campaign was paused or canceled: no
			// dial. A paused or canceled campaign places nothing more this tick.
			cur, gerr := r.Service.Store.GetCampaign(ctx, c.ID)
			if gerr != nil || cur.Status != StatusRunning {
				return gerr
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("claim recipient %s: %w", rc.ID, err)
		}
		rc.Revision++
		r.mu.Lock()
		r.lastDial[c.ID] = time.Now()
		r.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.place(context.WithoutCancel(ctx), c, caller, rc)
		}()
	}
	return nil
}

// due reads up to n pending recipients whose next attempt is due, in list order: with
// recipients in their own time zones, only those whose window is open now.
func (r *Runner) due(ctx context.Context, c Campaign, now time.Time, n int) ([]Recipient, error) {
	var out []Recipient
	err := r.Service.eachRecipient(ctx, c, RecipientPending, 100, func(rc Recipient) (bool, error) {
		if c.RecipientZones && !c.Settings.Window.OpenIn(now, rc.TimeZone) {
			return true, nil
		}
		if rc.NextAttemptAt == nil || !rc.NextAttemptAt.After(now) {
			out = append(out, rc)
		}
		return len(out) < n, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// place dials one claimed recipient as an outbound assistant session whose call has
// the attempt's id.
func (r *Runner) place(ctx context.Context, c Campaign, caller account.Caller, rc Recipient) {
	a := rc.Current()
	req := session.CreateRequest{PlatformHandle: rc.PlatformHandle, Mode: session.ModeAssistant, AssistantID: c.AssistantID, Media: platform.MediaAudio,
		LineID: c.LineID, Metadata: rc.Metadata, Variables: rc.Variables}
	if c.Settings.AMD.Enabled {
		a := c.Settings.AMD
		req.AMD = &a
	}
	req.Campaign(session.CampaignCall{CampaignID: c.ID, RecipientID: rc.ID, CallID: a.CallID, VersionID: c.VersionID})
	_, err := r.Dialer.Create(ctx, caller, req)
	if err == nil || errors.Is(err, session.ErrDialAttempted) {
		// The call is recorded: its end settles the attempt (CallEnded, or the next
		// tick's settleCalling).
		return
	}
	now := r.Service.now()
	if errors.Is(err, session.ErrConcurrentLimit) {
		// No slot: the recipient waits, and this was no attempt.
		rc.Attempts = rc.Attempts[:len(rc.Attempts)-1]
		next := now.Add(WaitForSlot)
		rc.Status, rc.NextAttemptAt = RecipientPending, &next
		r.update(ctx, rc)
		return
	}
	r.Service.log().Warn("campaign dial refused", "campaign_id", c.ID, "recipient_id", rc.ID, "err", err)
	msg := "the call could not be placed"
	final := false
	if e, ok := apierr.As(err); ok {
		msg = e.Message
		// A refusal of the request itself (a handle the line cannot dial, a destination
		// not allowed, an archived assistant) fails the same way on every retry.
		final = e.Status() < http.StatusInternalServerError
	}
	cur, gerr := r.Service.Store.GetCampaign(ctx, c.ID)
	if gerr == nil {
		c = cur
	}
	if final {
		c.Status = StatusCanceled // retries nothing: the recipient ends failed
		settle(c, &rc, OutcomeFailed, "", msg, now)
		rc.Status = RecipientFailed
	} else {
		settle(c, &rc, OutcomeFailed, call.ReasonPlatformError, msg, now)
	}
	r.update(ctx, rc)
}

// update writes a recipient the runner holds the claim of; a conflict means it was
// settled meanwhile.
func (r *Runner) update(ctx context.Context, rc Recipient) {
	if err := r.Service.Store.UpdateRecipient(ctx, rc); err != nil && !errors.Is(err, apierr.ErrConflict) {
		r.Service.log().Error("update campaign recipient", "recipient_id", rc.ID, "err", err)
	}
}

// completeIfDone completes a running campaign none of whose recipients is pending or
// calling, with campaign.completed in the same write.
func (r *Runner) completeIfDone(ctx context.Context, c Campaign) error {
	counts, err := r.Service.Counts(ctx, c)
	if err != nil {
		return err
	}
	if counts[RecipientPending] > 0 || counts[RecipientCalling] > 0 {
		return nil
	}
	_, err = r.updateCampaign(ctx, c.ID, func(c *Campaign) bool {
		if c.Status != StatusRunning {
			return false
		}
		now := r.Service.now()
		c.Status, c.CompletedAt, c.Active, c.LeaseOwner, c.LeaseUntil = StatusCompleted, &now, false, "", nil
		return true
	}, func(c Campaign) []callevent.Event { return []callevent.Event{completedEvent(c, counts)} })
	return err
}

// updateCampaign re-reads the campaign and writes fn's change (when fn says so), with
// the events evts makes of the changed campaign, again on a conflict.
func (r *Runner) updateCampaign(ctx context.Context, id string, fn func(*Campaign) bool, evts func(Campaign) []callevent.Event) (Campaign, error) {
	for range 10 {
		c, err := r.Service.Store.GetCampaign(ctx, id)
		if err != nil {
			return Campaign{}, err
		}
		if !fn(&c) {
			return c, nil
		}
		var es []callevent.Event
		if evts != nil {
			es = evts(c)
		}
		err = r.Service.Store.UpdateCampaign(ctx, c, es)
		if errors.Is(err, apierr.ErrConflict) {
			continue
		}
		return c, err
	}
	return Campaign{}, apierr.ErrConflict
}
