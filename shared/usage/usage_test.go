package usage_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// days is a usage.Store over a map, recording the dates asked for.
type days struct {
	have  map[string]usage.Counts
	asked []string
}

func (d *days) UsageDays(_ context.Context, _ string, dates []string) ([]usage.Day, error) {
	d.asked = dates
	var out []usage.Day
	for _, date := range dates {
		if c, ok := d.have[date]; ok {
			out = append(out, usage.Day{Date: date, Counts: c})
		}
	}
	return out, nil
}

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// TestReader: the range's days, every one listed oldest first (zero without calls),
// summed; the default range, and the refused ones.
func TestReader(t *testing.T) {
	store := &days{have: map[string]usage.Counts{
		"2026-11-02": {Calls: 2, DurationMS: 61000, BillableSeconds: 62, LLMPromptTokens: 900},
		"2026-11-04": {Calls: 1, DurationMS: 500, BillableSeconds: 1, TTSCharacters: 40},
	}}
	r := usage.Reader{Store: store, Now: func() time.Time { return *at("2026-11-27T10:00:00Z") }}

	// Times are read as the UTC days they fall on.
	rep, err := r.Get(context.Background(), "acct_1", at("2026-11-02T23:30:00-01:00"), at("2026-11-04T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.From != "2026-11-03" || rep.To != "2026-11-04" || len(rep.Days) != 2 || rep.Days[0] != (usage.Day{Date: "2026-11-03"}) ||
		rep.Days[1].Counts != store.have["2026-11-04"] || rep.Total != store.have["2026-11-04"] {
		t.Errorf("report %+v", rep)
	}
	rep, err = r.Get(context.Background(), "acct_1", at("2026-11-01T00:00:00Z"), at("2026-11-05T00:00:00Z"))
	want := usage.Counts{Calls: 3, DurationMS: 61500, BillableSeconds: 63, TTSCharacters: 40, LLMPromptTokens: 900}
	if err != nil || len(rep.Days) != 5 || rep.Total != want || rep.Days[1].Date != "2026-11-02" {
		t.Errorf("report %+v, %v; want 5 days summing to %+v", rep, err, want)
	}

	// No bounds: the 30 days up to today.
	rep, err = r.Get(context.Background(), "acct_1", nil, nil)
	if err != nil || rep.From != "2026-10-29" || rep.To != "2026-11-27" || len(rep.Days) != 30 || len(store.asked) != 30 {
		t.Errorf("default range %s..%s, %d days (%d read), %v", rep.From, rep.To, len(rep.Days), len(store.asked), err)
	}
	// 92 days is the most.
	if rep, err := r.Get(context.Background(), "acct_1", at("2026-08-28T00:00:00Z"), at("2026-11-27T23:59:59Z")); err != nil || len(rep.Days) != 92 {
		t.Errorf("92 days: %d, %v", len(rep.Days), err)
	}
	for _, tc := range []struct {
		name     string
		gte, lte *time.Time
	}{
		{"93 days", at("2026-08-27T00:00:00Z"), at("2026-11-27T00:00:00Z")},
		{"centuries", at("0001-01-01T00:00:00Z"), at("9999-12-31T00:00:00Z")},
		{"lte before gte", at("2026-11-05T00:00:00Z"), at("2026-11-04T00:00:00Z")},
		{"gte only, long ago", at("2025-01-01T00:00:00Z"), nil},
	} {
		store.asked = nil
		_, err := r.Get(context.Background(), "acct_1", tc.gte, tc.lte)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != "parameter_invalid" || store.asked != nil {
			t.Errorf("%s: %v (read %v), want 400 parameter_invalid without a read", tc.name, err, store.asked)
		}
	}
	if got := usage.Dates(*at("2026-12-30T05:00:00Z"), *at("2027-01-02T00:00:00Z")); !slices.Equal(got, []string{"2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02"}) {
		t.Errorf("Dates = %v", got)
	}
}
