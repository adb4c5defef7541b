package agent

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRefreshing: the token is fetched once and reused while it has more than the
// refresh margin left, fetched again past it, and a still-valid one outlives a failed
// fetch; with none valid the fetch's error is the dial's.
func TestRefreshing(t *testing.T) {
	ctx := context.Background()
	fetches := 0
	life := time.Hour
	var fail error
	src := Refreshing(func(context.Context) (string, time.Time, error) {
		if fail != nil {
			return "", time.Time{}, fail
		}
		fetches++
		return "tok" + string(rune('0'+fetches)), time.Now().Add(life), nil
	}, time.Minute)
	for range 3 {
		if tok, err := src(ctx); err != nil || tok != "tok1" {
			t.Fatalf("token %q, %v; want tok1 reused", tok, err)
		}
	}
	// The next one lives 30 s: under the margin, so each dial asks again.
	life = 30 * time.Second
	fetches = 1
	src = Refreshing(func(context.Context) (string, time.Time, error) {
		if fail != nil {
			return "", time.Time{}, fail
		}
		fetches++
		return "tok" + string(rune('0'+fetches)), time.Now().Add(life), nil
	}, time.Minute)
	a, _ := src(ctx)
	b, _ := src(ctx)
	if a != "tok2" || b != "tok3" {
		t.Errorf("tokens %q, %q; want a fresh one for each dial once under the margin", a, b)
	}
	fail = errors.New("control plane away")
	if tok, err := src(ctx); err != nil || tok != "tok3" {
		t.Errorf("failed fetch with a valid token: %q, %v; want tok3", tok, err)
	}
	empty := Refreshing(func(context.Context) (string, time.Time, error) { return "", time.Time{}, fail }, time.Minute)
	if _, err := empty(ctx); !errors.Is(err, fail) {
		t.Errorf("failed fetch with no token: %v, want the fetch's error", err)
	}
}
