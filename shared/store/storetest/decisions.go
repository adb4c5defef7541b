package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// RunDecisions runs the customer_decides decision cases, each against a fresh store.
func RunDecisions(t *testing.T, newStore func(t *testing.T) decision.Store) {
	for name, c := range decisionCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var decisionCases = map[string]func(*testing.T, decision.Store){
	"create get round trip":                decisionRoundTrip,
	"first decide wins":                    decisionFirstWins,
	"concurrent decide, one":               decisionConcurrent,
	"decide unknown call":                  decisionUnknown,
	"assistant answer keeps its variables": decisionVariables,
}

func pendingDecision() decision.Record {
	now := time.Now().UTC().Truncate(time.Millisecond)
	call := ident.New("call")
	return decision.Record{CallID: call, AccountID: ident.New("acct"), LineID: ident.New("line"), EventID: ident.New("evt"),
		AnswerBy: now.Add(10 * time.Second), CreatedAt: now,
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: call, RTCURL: "ws://127.0.0.1:7880",
			ParticipantToken: "tok", ParticipantIdentity: "customer-0123456789abcdef", ExpiresAt: now.Add(10 * time.Minute)}}
}

func decisionRoundTrip(t *testing.T, s decision.Store) {
	r := pendingDecision()
	if err := s.CreateDecision(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDecision(ctx(t), r); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second CreateDecision = %v, want ErrConflict", err)
	}
	got, err := s.GetDecision(ctx(t), r.CallID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision != "" || got.Session != r.Session || !got.AnswerBy.Equal(r.AnswerBy) || got.AccountID != r.AccountID {
		t.Errorf("GetDecision = %+v, want %+v", got, r)
	}
}

func decisionFirstWins(t *testing.T, s decision.Store) {
	r := pendingDecision()
	if err := s.CreateDecision(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	got, won, err := s.Decide(ctx(t), r.CallID, decision.Accept, decision.SourceWebhook, nil, at)
	if err != nil || !won || got.Decision != decision.Accept || got.Source != decision.SourceWebhook || !got.DecidedAt.Equal(at) {
		t.Fatalf("first Decide = %+v, %v, %v", got, won, err)
	}
	got, won, err = s.Decide(ctx(t), r.CallID, decision.Decline, decision.SourceAPI, nil, at.Add(time.Second))
	if err != nil || won || got.Decision != decision.Accept || got.Source != decision.SourceWebhook {
		t.Errorf("second Decide = %+v, %v, %v; want the first decision kept", got, won, err)
	}
}

func decisionConcurrent(t *testing.T, s decision.Store) {
	r := pendingDecision()
	if err := s.CreateDecision(ctx(t), r); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	wins, seen := 0, map[string]bool{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := []string{decision.Accept, decision.Decline, decision.Timeout}[i%3]
			got, won, err := s.Decide(ctx(t), r.CallID, d, decision.SourceAPI, nil, time.Now())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("Decide: %v", err)
				return
			}
			if won {
				wins++
			}
			seen[got.Decision] = true
		}()
	}
	wg.Wait()
	if wins != 1 || len(seen) != 1 {
		t.Errorf("%d writers won and %d decisions were returned, want exactly one of each", wins, len(seen))
	}
}

func decisionUnknown(t *testing.T, s decision.Store) {
	if _, _, err := s.Decide(ctx(t), ident.New("call"), decision.Accept, decision.SourceAPI, nil, time.Now()); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("Decide(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.GetDecision(ctx(t), ident.New("call")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetDecision(unknown) = %v, want ErrNotFound", err)
	}
}
