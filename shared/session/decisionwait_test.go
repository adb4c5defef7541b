package session

import (
	"context"
	"testing"
	"time"
)

// The wait for a customer's decision leaves DecisionReserve before the request's deadline.
func TestDecisionWait(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		reserve  time.Duration
		deadline time.Duration // from now; 0 means none
		line     time.Duration
		want     time.Duration
	}{
		{name: "no deadline waits the line's timeout", reserve: 16 * time.Second, line: 30 * time.Second, want: 30 * time.Second},
		{name: "no reserve waits the line's timeout", deadline: 29 * time.Second, line: 30 * time.Second, want: 30 * time.Second},
		{name: "fits before the reserve", reserve: 16 * time.Second, deadline: 29 * time.Second, line: 10 * time.Second, want: 10 * time.Second},
		{name: "cut to leave the reserve", reserve: 16 * time.Second, deadline: 29 * time.Second, line: 30 * time.Second, want: 13 * time.Second},
		{name: "at least a second", reserve: 16 * time.Second, deadline: 10 * time.Second, line: 30 * time.Second, want: time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{set: Settings{DecisionReserve: tc.reserve, Now: func() time.Time { return now }}}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			if got := s.decisionWait(ctx, tc.line); got != tc.want {
				t.Errorf("decisionWait = %v, want %v", got, tc.want)
			}
		})
	}
}
