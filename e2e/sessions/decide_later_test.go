package sessions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// ringUndecided places a call on the tenant's first line in customer_decides mode whose
// receiver only acknowledges call.incoming, and returns the sim call and call.incoming
// once the platform notification was handled: the call rings undecided and its session
// waits for the sweeper (DecideBy).
func ringUndecided(t *testing.T, st *harness.Stack, timeout int) (platformsim.Call, callevent.CallIncoming) {
	t.Helper()
	patchLine(t, st, st.Handles[0], map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": timeout})
	recv := incomingReceiver(t, st)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" })
	sc := placeCall(t, st, st.Handles[0], "audio")
	got := recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, nil)
	var in callevent.CallIncoming
	if err := json.Unmarshal(got.Event.Data, &in); err != nil {
		t.Fatal(err)
	}
	// The handler is done once the POST's attempt is logged (and it read the decision
	// right after): an answer the test records from here on comes after it returned.
	harness.WaitFor(t, 10*time.Second, "call.incoming's attempt logged", func() bool {
		var evt struct {
			Attempts []json.RawMessage `json:"attempts"`
		}
		st.Do(t, http.MethodGet, "/v1/events/"+got.Event.ID, nil, &evt)
		return len(evt.Attempts) > 0
	})
	time.Sleep(500 * time.Millisecond)
	ses, err := st.Store.GetSession(context.Background(), in.Session.SessionID)
	if err != nil || ses.Status != session.StatusRinging || ses.DecideBy == nil || !ses.DecideBy.Equal(in.AnswerBy) {
		t.Fatalf("session while the call rings = %+v, %v; want ringing, due at answer_by %s", ses, err, in.AnswerBy)
	}
	return sc, in
}

// TestDecisionSurvivesALostMark: the API answer is recorded, but the process dies before
// it marks the session due (the decision is written straight into the store, as the
// answer's first step does). Nothing is lost: the sweeper finds the session at answer_by
// and carries the recorded accept out (the caller bridged, the decision the API's), not
// the line's timeout.
func TestDecisionSurvivesALostMark(t *testing.T) {
	st := tenant(t)
	sc, in := ringUndecided(t, st, 3)
	if _, won, err := st.Store.Decide(context.Background(), in.CallID, decision.Accept, decision.SourceAPI, nil, time.Now()); err != nil || !won {
		t.Fatalf("record the answer: won %v, %v", won, err)
	}
	time.Sleep(time.Until(in.AnswerBy.Add(-time.Second)))
	if c := record(t, st, in.CallID); c.Status != call.StatusRinging {
		t.Fatalf("call before answer_by = %s, want still ringing (nothing marked it due)", c.Status)
	}
	waitSimCall(t, st, sc.ID, platformsim.StatusAnswered)
	c := waitRecord(t, st, in.CallID, "the accepted call", func(c recordObj) bool { return c.Status == call.StatusActive })
	var full map[string]any
	st.Do(t, http.MethodGet, "/v1/calls/"+c.ID, nil, &full)
	if full["decision"] != decision.Accept || full["decision_source"] != decision.SourceAPI {
		t.Errorf("call = %v, want accepted through the API", full)
	}
	hangupSim(t, st, sc.ID)
	waitRecord(t, st, in.CallID, "the call ended", func(c recordObj) bool { return c.Status == call.StatusEnded })
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallAnswered, in.CallID)
}

// TestDecisionCarriedOutOnce: an API accept marks the session due, and five sweeps plus a
// redelivered inbound notification race to carry it out: the claim lets one act, so the
// caller is bridged and call.answered written exactly once. Then a claimant that died
// after its claim (the decision on the call, the lease over, nothing done) is repaired by
// the next sweep: the call is declined as decided, once.
func TestDecisionCarriedOutOnce(t *testing.T) {
	st := tenant(t)
	sc, in := ringUndecided(t, st, 20)
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/calls/"+in.CallID+"/answer", map[string]any{"action": "accept"}, nil),
		http.StatusCreated, "accept")
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := st.Service.Sweep(context.Background()); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}()
	}
	if err := st.Service.HandleNotification(context.Background(), platformsim.Name, platform.Notification{Event: platform.EventInbound,
		PlatformCallID: sc.ID, From: sc.From, To: sc.To, Media: sc.Media}); err != nil {
		t.Errorf("redelivered inbound: %v", err)
	}
	wg.Wait()
	waitSimCall(t, st, sc.ID, platformsim.StatusAnswered)
	waitRecord(t, st, in.CallID, "the accepted call", func(c recordObj) bool { return c.Status == call.StatusActive })
	hangupSim(t, st, sc.ID)
	waitRecord(t, st, in.CallID, "the call ended", func(c recordObj) bool { return c.Status == call.StatusEnded })
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallAnswered, in.CallID)
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, in.CallID)

	// A claimant that died: the decline recorded and laid on the call, the lease over.
	sc2, in2 := ringUndecided(t, st, 20)
	ctx := context.Background()
	if _, _, err := st.Store.Decide(ctx, in2.CallID, decision.Decline, decision.SourceAPI, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	ses, err := st.Store.GetSession(ctx, in2.Session.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := st.Store.GetCall(ctx, in2.CallID)
	if err != nil {
		t.Fatal(err)
	}
	over := time.Now().Add(-time.Second)
	ses.DecideBy, ses.SweepAt = &over, &over
	c2.Decision, c2.DecisionSource = decision.Decline, decision.SourceAPI
	if err := st.Store.SaveSession(ctx, ses, c2, nil); err != nil {
		t.Fatal(err)
	}
	waitSimCall(t, st, sc2.ID, platformsim.StatusRejected)
	got := waitRecord(t, st, in2.CallID, "the declined call", func(c recordObj) bool { return c.Status == call.StatusDeclined })
	if str(got.EndReason) != call.ReasonDeclined {
		t.Errorf("repaired call ended %q, want %s", str(got.EndReason), call.ReasonDeclined)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, in2.CallID)
}
