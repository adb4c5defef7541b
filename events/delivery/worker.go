package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// Worker is the local delivery loop: it fans new outbox events out into deliveries, one
// per subscribed endpoint, and makes each delivery's attempts when they fall due. All its
// state is in the Outbox, so a process killed mid-delivery resumes on the next Run: the
// attempt in flight is made again (at least once), with the same webhook-id.
//
// One Worker per outbox: Run releases every claim it finds at start.
type Worker struct {
	Outbox      Outbox
	Log         Log
	Subscribers Subscribers
	Deliverer   *Deliverer
	Logger      *slog.Logger
	// Concurrency is how many attempts run at once (default 16).
	Concurrency int
	// PerEndpoint is how many of them may go to one endpoint (default half of
	// PerAccount), so a slow endpoint cannot hold up every other one, its account's
	// included.
	PerEndpoint int
	// PerAccount is how many may go to one account's endpoints together (default half of
	// Concurrency): an account has up to 16 endpoints, and without this bound a few of
	// them stalled filled every slot, so other accounts' events waited out the stalled
	// attempts' timeouts (14.5 s measured).
	PerAccount int
	// Poll is the longest the worker sleeps before looking for new events (default 100 ms);
	// Notify wakes it sooner.
	Poll time.Duration
	Now  func() time.Time

	once sync.Once
	wake chan struct{}
}

// staleClaim is far longer than an attempt can take (Timeout plus the store writes).
const staleClaim = 2 * time.Minute

// Notify tells the worker an event was just written, so it need not wait for its poll.
func (w *Worker) Notify() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Worker) init() {
	w.once.Do(func() { w.wake = make(chan struct{}, 1) })
}

// Run delivers until ctx ends, then waits for the attempts in flight and returns nil.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	n, err := w.Outbox.ReleaseDeliveryClaims(ctx, w.now().Add(time.Second))
	if err != nil {
		return fmt.Errorf("resume deliveries: %w", err)
	}
	if n > 0 {
		w.logger().Info("resuming deliveries interrupted by a restart", "count", n)
	}
	conc := w.Concurrency
	if conc <= 0 {
		conc = 16
	}
	poll := w.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	perAccount := w.PerAccount
	if perAccount <= 0 {
		perAccount = max(conc/2, 1)
	}
	perEndpoint := w.PerEndpoint
	if perEndpoint <= 0 {
		perEndpoint = max(perAccount/2, 1)
	}
	slots := make(chan struct{}, conc)
	var busyMu sync.Mutex
	busy := map[string]int{}     // endpoint id -> attempts in flight
	busyAcct := map[string]int{} // account id -> attempts in flight
	var inflight sync.WaitGroup
	defer inflight.Wait()
	done := make(chan struct{}, conc)
	lastSweep := w.now()
	for ctx.Err() == nil {
		if now := w.now(); now.Sub(lastSweep) > staleClaim/4 {
			// A claim this old belongs to an attempt whose outcome was never stored.
			if _, err := w.Outbox.ReleaseDeliveryClaims(ctx, now.Add(-staleClaim)); err != nil && ctx.Err() == nil {
				w.logger().Error("release stale claims", "err", err)
			}
			lastSweep = now
		}
		if err := w.fanOut(ctx); err != nil && ctx.Err() == nil {
			w.logger().Error("fan out events", "err", err)
		}
		claimed := 0
		if free := conc - len(slots); free > 0 {
			busyMu.Lock()
			lim := ClaimLimits{Limit: free, PerEndpoint: perEndpoint, PerAccount: perAccount,
				Busy: maps.Clone(busy), BusyAccounts: maps.Clone(busyAcct)}
			busyMu.Unlock()
			ds, err := w.Outbox.ClaimDueDeliveries(ctx, w.now(), lim)
			if err != nil && ctx.Err() == nil {
				w.logger().Error("claim deliveries", "err", err)
			}
			for _, d := range ds {
				busyMu.Lock()
				busy[d.EndpointID]++
				busyAcct[d.AccountID]++
				busyMu.Unlock()
				claimed++
				slots <- struct{}{}
				inflight.Add(1)
				go func() {
					defer inflight.Done()
					// An attempt in flight finishes even when Run is asked to stop, so its
					// result is stored; the request itself is bounded by Timeout.
					w.deliver(context.WithoutCancel(ctx), d)
					busyMu.Lock()
					if busy[d.EndpointID]--; busy[d.EndpointID] == 0 {
						delete(busy, d.EndpointID)
					}
					if busyAcct[d.AccountID]--; busyAcct[d.AccountID] == 0 {
						delete(busyAcct, d.AccountID)
					}
					busyMu.Unlock()
					<-slots
					select {
					case done <- struct{}{}:
					default:
					}
				}()
			}
		}
		// Sleep until the next delivery falls due, a poll passes, an event is written
		// (Notify) or an attempt finishes. Loop at once only when this round claimed
		// something and more is due: deliveries due but held back (every slot, or their
		// endpoint, busy) wait for an attempt to finish.
		wait := poll
		if next, ok, err := w.Outbox.NextDeliveryDue(ctx); err == nil && ok {
			if d := next.Sub(w.now()); d > 0 {
				wait = min(wait, d)
			} else if claimed > 0 && len(slots) < conc {
				wait = 0
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	return nil
}

// RunOnce fans out and makes every attempt due now, one after another; tests and the
// benchmark use it to step the worker.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	if err := w.fanOut(ctx); err != nil {
		return 0, err
	}
	ds, err := w.Outbox.ClaimDueDeliveries(ctx, w.now(), ClaimLimits{Limit: 1000, PerEndpoint: 1000})
	if err != nil {
		return 0, err
	}
	for _, d := range ds {
		w.deliver(ctx, d)
	}
	return len(ds), nil
}

// fanOut turns undispatched events into deliveries.
func (w *Worker) fanOut(ctx context.Context) error {
	for range 100 { // bounded: at most 10,000 events per pass
		evts, err := w.Outbox.UndispatchedEvents(ctx, 100)
		if err != nil || len(evts) == 0 {
			return err
		}
		for _, evt := range evts {
			ds, err := Plan(ctx, w.Subscribers, evt, w.now())
			if err != nil {
				return err
			}
			if err := w.Outbox.AddDeliveries(ctx, evt.ID, ds); err != nil && !errors.Is(err, apierr.ErrConflict) {
				return fmt.Errorf("add deliveries of %s: %w", evt.ID, err)
			}
		}
	}
	return nil
}

// Plan makes the deliveries of evt: one per enabled endpoint of its account subscribed to
// its type, due now.
func Plan(ctx context.Context, subs Subscribers, evt callevent.Event, now time.Time) ([]Delivery, error) {
	if evt.Type == callevent.TypeCallIncoming {
		return nil, nil // posted synchronously by the decision flow, never queued
	}
	eps, err := subs.Subscribed(ctx, evt.AccountID, evt.Type)
	if err != nil {
		return nil, fmt.Errorf("endpoints for %s: %w", evt.ID, err)
	}
	ds := make([]Delivery, 0, len(eps))
	for _, ep := range eps {
		ds = append(ds, Delivery{ID: ident.New("dlv"), EventID: evt.ID, AccountID: evt.AccountID,
			EndpointID: ep.ID, State: StatePending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now})
	}
	return ds, nil
}

// deliver makes the delivery's next attempt and stores the outcome.
func (w *Worker) deliver(ctx context.Context, d Delivery) {
	evt, err := w.Log.GetEvent(ctx, d.EventID)
	if err != nil {
		w.logger().Error("read event for delivery", "event_id", d.EventID, "err", err)
		w.release(ctx, d, w.now().Add(time.Minute))
		return
	}
	a, found, err := w.Deliverer.Attempt(ctx, evt, d.EndpointID, d.Attempts+1)
	if err != nil && a.ID == "" {
		w.logger().Error("attempt delivery", "event_id", d.EventID, "endpoint_id", d.EndpointID, "err", err)
		w.release(ctx, d, w.now().Add(time.Minute))
		return
	}
	if err != nil {
		w.logger().Error("after delivery attempt", "event_id", d.EventID, "endpoint_id", d.EndpointID, "err", err)
	}
	d.UpdatedAt = w.now()
	if !found {
		d.State = StateCanceled
		w.finish(ctx, d, nil)
		return
	}
	d.Attempts = a.Number
	switch {
	case a.Outcome == OutcomeSucceeded:
		d.State = StateSucceeded
	case a.Outcome == OutcomeGone:
		d.State = StateCanceled
	case a.NextAttemptAt != nil:
		d.State, d.NextAttemptAt = StatePending, *a.NextAttemptAt
	default:
		d.State = StateFailed
	}
	w.logger().Info("webhook attempt", "event_id", a.EventID, "endpoint_id", a.EndpointID,
		"attempt", a.Number, "outcome", a.Outcome, "status", a.StatusCode, "error", a.Error, "duration_ms", a.DurationMS)
	w.finish(ctx, d, &a)
}

// release gives a claimed delivery back, due at the given time, without an attempt.
func (w *Worker) release(ctx context.Context, d Delivery, at time.Time) {
	d.NextAttemptAt, d.UpdatedAt = at, w.now()
	w.finish(ctx, d, nil)
}

func (w *Worker) finish(ctx context.Context, d Delivery, a *Attempt) {
	if err := w.Outbox.FinishDelivery(ctx, d, a); err != nil {
		// The claim stays; the next Run releases it and the attempt is made again.
		w.logger().Error("store delivery outcome", "delivery_id", d.ID, "err", err)
	}
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now().UTC()
	}
	return time.Now().UTC()
}

func (w *Worker) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// OutboxRedeliverer queues redeliveries in the local outbox, due now; the worker makes
// them like any other delivery.
type OutboxRedeliverer struct {
	Outbox Outbox
	Now    func() time.Time
	// Notify, when set, wakes the worker (Worker.Notify).
	Notify func()
}

// Redeliver adds a fresh delivery of evt to each endpoint.
func (o *OutboxRedeliverer) Redeliver(ctx context.Context, evt callevent.Event, endpointIDs []string) error {
	now := time.Now().UTC()
	if o.Now != nil {
		now = o.Now().UTC()
	}
	ds := make([]Delivery, 0, len(endpointIDs))
	for _, id := range endpointIDs {
		ds = append(ds, Delivery{ID: ident.New("dlv"), EventID: evt.ID, AccountID: evt.AccountID, EndpointID: id,
			State: StatePending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now})
	}
	if err := o.Outbox.AddRedeliveries(ctx, ds); err != nil {
		return err
	}
	if o.Notify != nil {
		o.Notify()
	}
	return nil
}
