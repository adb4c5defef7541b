package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/quality"
	"github.com/bridgeline/bridgeline/shared/session"
)

// QualityStore is what the versions' quality aggregate needs of a store: the call
// writes that add to it, and its read.
type QualityStore interface {
	session.Stores
	quality.Store
}

// RunQuality runs the quality aggregate's cases, each against a fresh store.
func RunQuality(t *testing.T, newStore func(t *testing.T) QualityStore) {
	for name, c := range qualityCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var qualityCases = map[string]func(*testing.T, QualityStore){
	"concurrent ends and redelivered reports count each call once": qualityConcurrentReports,
}

// qualityConcurrentReports: assistant calls of two versions of one account (and one of
// another account's, and one without a version) end while their worker's final report
// comes, twice (a redelivery, written again); some are in sessions, some on their own,
// and one's report comes after it was marked missing. Each version's aggregate then
// holds exactly the sum of its calls' figures, each call counted once, the response
// samples in their buckets; the calls keep no samples once counted.
func qualityConcurrentReports(t *testing.T, s QualityStore) {
	acct, other := ident.New("acct"), ident.New("acct")
	v4, v5, otherV := ident.New("ver"), ident.New("ver"), ident.New("ver")
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	type placed struct {
		sessionID, callID string
		metrics           persona.Metrics
		samples           []int64
	}
	var calls []placed
	for i := range 12 {
		ses, c := newSessionPair(acct)
		c.HandledBy, c.AssistantID, c.VersionID = call.HandledByAssistant, "asst_1", v4
		switch {
		case i%2 == 1:
			c.VersionID = v5
		case i == 10:
			c.AccountID, ses.AccountID, c.VersionID = other, other, otherV
		case i == 8:
			c.VersionID = "" // not an assistant version's: never counted
		}
		c.StartedAt = start
		c.Answer(start.Add(time.Second))
		turns, cuts, callerMS := i+1, i%3, int64(1000*(i+1))
		p := placed{metrics: persona.Metrics{Turns: &turns, MidSentenceCuts: &cuts, CallerSpeechMS: &callerMS},
			samples: []int64{int64(300 + 100*i), 480}}
		if i%4 == 3 { // a call on its own
			c.SessionID = ""
			if err := s.SaveCall(ctx(t), c, nil); err != nil {
				t.Fatal(err)
			}
			p.callID = c.ID
		} else {
			if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
				t.Fatal(err)
			}
			p.sessionID, p.callID = ses.ID, c.ID
		}
		calls = append(calls, p)
	}
	// The report of call 0 comes after call.ended went out without it.
	if err := rewrite(ctx(t), s, calls[0].sessionID, calls[0].callID, func(c *call.Call) bool {
		c.AssistantReport = call.ReportMissing
		return true
	}); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 3*len(calls))
	for _, p := range calls {
		end := func(c *call.Call) bool {
			_, ok := c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote,
				c.AnsweredAt.Add(time.Minute), func() string { return ident.New("evt") })
			return ok
		}
		// The receiver's change of a final report (session.applyReport), written even
		// when it is a redelivery: the aggregate must not count it again.
		report := func(c *call.Call) bool {
			m := p.metrics
			c.Metrics, c.AssistantReport = &m, call.ReportReceived
			if !c.QualityCounted {
				c.ResponseSamplesMS = p.samples
			}
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

	want := map[string]quality.Counts{}
	for _, p := range calls {
		c, err := s.GetCall(ctx(t), p.callID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status != call.StatusEnded || c.AssistantReport != call.ReportReceived {
			t.Fatalf("call %s: %s, report %q; want ended with its report", c.ID, c.Status, c.AssistantReport)
		}
		if c.VersionID == "" {
			if c.QualityCounted {
				t.Errorf("call %s without a version counted", c.ID)
			}
			continue
		}
		if !c.QualityCounted || c.ResponseSamplesMS != nil {
			t.Errorf("call %s: counted %v, samples %v; want counted, samples dropped", c.ID, c.QualityCounted, c.ResponseSamplesMS)
		}
		want[c.VersionID] = want[c.VersionID].Add(quality.OfCall(p.metrics, p.samples))
	}
	got, err := s.VersionQuality(ctx(t), acct, []string{v4, v5, otherV, ident.New("ver")})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]quality.Counts{}
	for _, v := range got {
		if _, dup := have[v.VersionID]; dup {
			t.Errorf("version %s twice", v.VersionID)
		}
		have[v.VersionID] = v.Counts
	}
	if len(have) != 2 || have[v4] != want[v4] || have[v5] != want[v5] {
		t.Errorf("versions %+v, want v4 %+v and v5 %+v only (another account's version apart)", have, want[v4], want[v5])
	}
	if have[v4].Calls != 4 || have[v5].Calls != 6 || have[v5].Replies() != 12 {
		t.Errorf("v4 %d calls, v5 %d calls %d replies; want 4, 6 and 12", have[v4].Calls, have[v5].Calls, have[v5].Replies())
	}
	if o, err := s.VersionQuality(ctx(t), other, []string{otherV}); err != nil || len(o) != 1 || o[0].Calls != 1 {
		t.Errorf("the other account's version: %+v, %v; want its one call", o, err)
	}
}
