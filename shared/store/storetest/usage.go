package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// UsageStore is what the usage aggregate needs of a store: the call writes that add to
// it, and its read.
type UsageStore interface {
	session.Stores
	usage.Store
}

// RunUsage runs the usage aggregate's cases, each against a fresh store.
func RunUsage(t *testing.T, newStore func(t *testing.T) UsageStore) {
	for name, c := range usageCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var usageCases = map[string]func(*testing.T, UsageStore){
	"concurrent call ends and reports count each call once":   usageConcurrentEnds,
	"outbound minutes on a network and transfers are counted": usageOutbound,
	"a redacted call keeps its usage, counted once":           usageRedactedCall,
}

// usageOutbound: what the daily outbound minutes cap reads (shared/destination): an
// outbound call dialled on a real network adds its length to outbound_duration_ms, a sim
// call does not, and a call that ended transferred counts one transfer; each once.
func usageOutbound(t *testing.T, s UsageStore) {
	acct := ident.New("acct")
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for i, tc := range []struct {
		onNetwork   bool
		transferred bool
	}{{true, false}, {false, false}, {true, true}} {
		ses, c := newSessionPair(acct)
		c.StartedAt, c.OnNetwork = start, tc.onNetwork
		c.Answer(start)
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		reason := call.ReasonRemoteHangup
		if tc.transferred {
			reason = call.ReasonTransferred
		}
		for range 2 { // the second write finds nothing more to count
			err := rewrite(ctx(t), s, ses.ID, c.ID, func(c *call.Call) bool {
				if tc.transferred {
					c.Transfer = &call.Transfer{To: "+15550109999", Status: call.TransferCompleted, RequestedAt: start, By: "customer"}
				}
				c.End(call.StatusEnded, reason, call.EndedByRemote, start.Add(time.Duration(i+1)*time.Minute), func() string { return ident.New("evt") })
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	days, err := s.UsageDays(ctx(t), acct, []string{usage.Date(start)})
	if err != nil || len(days) != 1 {
		t.Fatalf("UsageDays = %+v, %v", days, err)
	}
	if d := days[0]; d.OutboundDurationMS != (1+3)*60000 || d.Transfers != 1 || d.DurationMS != (1+2+3)*60000 || d.Calls != 3 {
		t.Errorf("day = %+v; want outbound 4 min (the sim call apart), 1 transfer, 6 min in all, 3 calls", d.Counts)
	}
}

// rewrite is the services' read, change, conditional write, retried on a conflict: a
// session's call through SaveSession, or a call on its own through SaveCall.
func rewrite(ctx context.Context, s UsageStore, sessionID, callID string, change func(*call.Call) bool) error {
	for range 200 {
		c, err := s.GetCall(ctx, callID)
		if err != nil {
			return err
		}
		if !change(&c) {
			return nil
		}
		if sessionID == "" {
			err = s.SaveCall(ctx, c, nil)
		} else {
			var ses session.Session
			if ses, err = s.GetSession(ctx, sessionID); err != nil {
				return err
			}
			err = s.SaveSession(ctx, ses, c, nil)
		}
		if !errors.Is(err, apierr.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("call %s: still conflicting", callID)
}

// usageConcurrentEnds: calls of one account over two days end at once, some in
// sessions and some on their own; each call's end and its worker's report (twice: a
// redelivery) race. The days then hold exactly the sum of the call records, each call
// counted once, and another account's calls apart.
func usageConcurrentEnds(t *testing.T, s UsageStore) {
	acct, other := ident.New("acct"), ident.New("acct")
	day1 := time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Minute) // past midnight: the next day
	type placed struct{ sessionID, callID string }
	var calls []placed
	for i := range 16 {
		accountID, start := acct, day1
		switch {
		case i%2 == 1:
			start = day2
		case i == 14:
			accountID = other
		}
		ses, c := newSessionPair(accountID)
		c.StartedAt = start
		c.Answer(start.Add(time.Second))
		if i%4 == 3 { // a call on its own
			c.SessionID = ""
			if err := s.SaveCall(ctx(t), c, nil); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, placed{callID: c.ID})
			continue
		}
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, placed{sessionID: ses.ID, callID: c.ID})
	}

	var wg sync.WaitGroup
	errs := make(chan error, 3*len(calls))
	for i, p := range calls {
		end := func(c *call.Call) bool {
			_, ok := c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote,
				c.AnsweredAt.Add(time.Duration(1000*(i+1)+i)*time.Millisecond), func() string { return ident.New("evt") })
			return ok
		}
		worker := persona.Usage{STTAudioMS: int64(100 * (i + 1)), TTSCharacters: int64(10 * (i + 1)),
			LLMPromptTokens: int64(1000 + i), LLMCompletionTokens: int64(50 + i)}
		report := func(c *call.Call) bool {
			if c.Usage != nil && c.Usage.Usage == worker {
				return false // a redelivery: nothing changes
			}
			c.CountUsage(worker)
			return true
		}
		for _, change := range []func(*call.Call) bool{end, report, report} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- rewrite(ctx(t), s, p.sessionID, p.callID, change)
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A later write of an ended call (its metadata, say) adds nothing.
	if err := rewrite(ctx(t), s, calls[0].sessionID, calls[0].callID, func(c *call.Call) bool {
		c.Metadata = map[string]string{"k": "v"}
		return true
	}); err != nil {
		t.Fatal(err)
	}

	want := map[string]map[string]usage.Counts{acct: {}, other: {}}
	for _, p := range calls {
		c, err := s.GetCall(ctx(t), p.callID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Usage == nil || c.Usage.BillableSeconds == 0 || c.Usage.LLMPromptTokens == 0 {
			t.Fatalf("call %s (%s, revision %d) usage %+v, want its end and its report", c.ID, c.Status, c.Revision, c.Usage)
		}
		d := usage.Date(c.StartedAt)
		want[c.AccountID][d] = want[c.AccountID][d].Add(c.Usage.Counts())
	}
	dates := []string{"2026-11-23", usage.Date(day1), usage.Date(day2), "2026-11-26"}
	for accountID, days := range want {
		got, err := s.UsageDays(ctx(t), accountID, dates)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]usage.Counts{}
		for _, d := range got {
			if _, dup := have[d.Date]; dup {
				t.Errorf("%s: day %s twice", accountID, d.Date)
			}
			have[d.Date] = d.Counts
		}
		if len(have) != len(days) {
			t.Errorf("%s: days %+v, want %+v", accountID, have, days)
		}
		for d, w := range days {
			if have[d] != w {
				t.Errorf("%s on %s: %+v, want the calls' sum %+v", accountID, d, have[d], w)
			}
		}
	}
	if got := want[acct][usage.Date(day1)].Calls + want[acct][usage.Date(day2)].Calls; got != 15 {
		t.Errorf("%d calls of the account counted, want 15", got)
	}
	if got, err := s.UsageDays(ctx(t), ident.New("acct"), dates); err != nil || len(got) != 0 {
		t.Errorf("an account without calls: %+v, %v", got, err)
	}
}
