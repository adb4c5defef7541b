// Package usage keeps what an account's calls used, per UTC day: an aggregate each call
// adds to in the same conditional write that records its usage (call.Call.TakeUsageDue,
// applied by the stores' SaveCall and SaveSession), so that GET /v1/usage reads one
// record per day and never walks the calls.
package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Counts are the figures summed per day. A call only adds to them.
type Counts struct {
	// Calls is how many calls ended (each counted once, on its first usage).
	Calls               int64 `json:"calls"`
	DurationMS          int64 `json:"duration_ms"`
	BillableSeconds     int64 `json:"billable_seconds"`
	STTAudioMS          int64 `json:"stt_audio_ms"`
	TTSCharacters       int64 `json:"tts_characters"`
	LLMPromptTokens     int64 `json:"llm_prompt_tokens"`
	LLMCompletionTokens int64 `json:"llm_completion_tokens"`
	// OutboundDurationMS is the length of the outbound calls placed on a real telephone
	// network (not the sim, not web calls): what the daily outbound minutes cap counts.
	OutboundDurationMS int64 `json:"outbound_duration_ms"`
	// Transfers is how many calls were handed to another party (completed transfers).
	Transfers int64 `json:"transfers"`
}

// Field is one count and its name (the JSON name: the stores' column or attribute).
type Field struct {
	Name  string
	Value *int64
}

// Fields are c's counts in a stable order.
func (c *Counts) Fields() []Field {
	return []Field{
		{"calls", &c.Calls}, {"duration_ms", &c.DurationMS}, {"billable_seconds", &c.BillableSeconds},
		{"stt_audio_ms", &c.STTAudioMS}, {"tts_characters", &c.TTSCharacters},
		{"llm_prompt_tokens", &c.LLMPromptTokens}, {"llm_completion_tokens", &c.LLMCompletionTokens},
		{"outbound_duration_ms", &c.OutboundDurationMS}, {"transfers", &c.Transfers},
	}
}

// Add is c plus o.
func (c Counts) Add(o Counts) Counts {
	of := o.Fields()
	for i, f := range c.Fields() {
		*f.Value += *of[i].Value
	}
	return c
}

// Since is what c has more than before, field by field; a count that went down (a
// worker's report replaced by a smaller one) adds nothing.
func (c Counts) Since(before Counts) Counts {
	bf := before.Fields()
	for i, f := range c.Fields() {
		*f.Value = max(0, *f.Value-*bf[i].Value)
	}
	return c
}

// DateLayout names a day: its UTC date.
const DateLayout = "2006-01-02"

// Date is the UTC day t falls on.
func Date(t time.Time) string { return t.UTC().Format(DateLayout) }

// Due is what one write adds to an account's day; the stores apply it in the transaction
// that writes the call carrying it.
type Due struct {
	AccountID string
	Date      string
	Counts
}

// Day is one day of an account's usage.
type Day struct {
	Date string `json:"date"`
	Counts
}

// Store reads the aggregate.
type Store interface {
	// UsageDays returns the account's days among dates (at most MaxDays) that have
	// usage, in any order; it reads those days' records only.
	UsageDays(ctx context.Context, accountID string, dates []string) ([]Day, error)
}

// MaxDays is the longest range GET /v1/usage takes.
const MaxDays = 92

// DefaultDays is the range GET /v1/usage covers without created[gte]: the 30 days that
// end on created[lte]'s day (default today).
const DefaultDays = 30

// Report is the answer of GET /v1/usage: every day of the range (zero for a day without
// calls), oldest first, and their sum.
type Report struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Days  []Day  `json:"data"`
	Total Counts `json:"total"`
}

// Reader serves GET /v1/usage.
type Reader struct {
	Store Store
	Now   func() time.Time // nil: time.Now
}

// Get sums the account's usage over the UTC days gte and lte fall on, both included (nil
// lte: now; nil gte: DefaultDays days ending on lte's). A range over MaxDays days, or
// lte before gte, is 400 parameter_invalid.
func (r Reader) Get(ctx context.Context, accountID string, gte, lte *time.Time) (Report, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	to := day(now())
	if lte != nil {
		to = day(*lte)
	}
	from := to.AddDate(0, 0, -(DefaultDays - 1))
	if gte != nil {
		from = day(*gte)
	}
	if to.Before(from) {
		return Report{}, apierr.Invalid("created[lte]", "created[lte] must not be before created[gte]")
	}
	// Counted before listing them: a range of centuries is refused without a loop.
	if n := int64(to.Sub(from)/(24*time.Hour)) + 1; n > MaxDays {
		return Report{}, apierr.Invalid("created[gte]",
			fmt.Sprintf("the range covers %d days (%s to %s); at most %d", n, Date(from), Date(to), MaxDays))
	}
	dates := Dates(from, to)
	days, err := r.Store.UsageDays(ctx, accountID, dates)
	if err != nil {
		return Report{}, fmt.Errorf("usage days: %w", err)
	}
	have := make(map[string]Counts, len(days))
	for _, d := range days {
		have[d.Date] = have[d.Date].Add(d.Counts)
	}
	rep := Report{From: Date(from), To: Date(to), Days: make([]Day, len(dates))}
	for i, d := range dates {
		rep.Days[i] = Day{Date: d, Counts: have[d]}
		rep.Total = rep.Total.Add(have[d])
	}
	return rep, nil
}

func day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Dates are the days from from to to, both included, as dates.
func Dates(from, to time.Time) []string {
	var out []string
	for d := day(from); !d.After(to); d = d.AddDate(0, 0, 1) {
		out = append(out, Date(d))
	}
	return out
}
