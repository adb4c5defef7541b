package call

import (
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// Usage is what a call used: its length, as billed, and what its assistant's worker
// counted (persona.Usage: zero for a call no assistant handled, or until the worker's
// final report comes). It is set when the call ends.
type Usage struct {
	// DurationMS is from answer to end (0 for a call never answered).
	DurationMS int64 `json:"duration_ms"`
	// BillableSeconds is DurationMS rounded up per started second.
	BillableSeconds int64 `json:"billable_seconds"`
	persona.Usage
}

// BillableSeconds is a duration in milliseconds rounded up per started second.
func BillableSeconds(durationMS int64) int64 {
	if durationMS <= 0 {
		return 0
	}
	return (durationMS + 999) / 1000
}

// setUsageDuration sets the usage's duration from the call's, keeping the worker's
// counts.
func (c *Call) setUsageDuration() {
	var u Usage
	if c.Usage != nil {
		u = *c.Usage
	}
	if c.DurationMS != nil {
		u.DurationMS = *c.DurationMS
	}
	u.BillableSeconds = BillableSeconds(u.DurationMS)
	c.Usage = &u
}

// CountUsage takes the worker's counts of the call (its ended report's); the duration
// and billable seconds stay the control plane's.
func (c *Call) CountUsage(w persona.Usage) {
	u := Usage{Usage: w}
	if c.Usage != nil {
		u.DurationMS, u.BillableSeconds = c.Usage.DurationMS, c.Usage.BillableSeconds
	}
	c.Usage = &u
}

// Counts are the usage as the daily aggregate sums it: one call.
func (u Usage) Counts() usage.Counts {
	return usage.Counts{Calls: 1, DurationMS: u.DurationMS, BillableSeconds: u.BillableSeconds,
		STTAudioMS: u.STTAudioMS, TTSCharacters: u.TTSCharacters,
		LLMPromptTokens: u.LLMPromptTokens, LLMCompletionTokens: u.LLMCompletionTokens}
}

// TakeUsageDue returns what the call adds to its account's usage on the day it started
// since the write that last counted it, and marks it counted (UsageCounted). A store
// calls it on the record it writes, in the same conditional write as the record: the
// call's first write with usage adds the call, a later report adds the difference, a
// redelivered one nothing. ok is false when nothing is due.
func (c *Call) TakeUsageDue() (due usage.Due, ok bool) {
	if c.Usage == nil {
		return usage.Due{}, false
	}
	now := c.Usage.Counts()
	if c.OnNetwork && c.Direction == Outbound {
		now.OutboundDurationMS = c.Usage.DurationMS
	}
	if c.EndReason == ReasonTransferred && c.Transfer != nil && c.Transfer.Status == TransferCompleted {
		now.Transfers = 1
	}
	var before usage.Counts
	if c.UsageCounted != nil {
		before = *c.UsageCounted
	}
	d := now.Since(before)
	counted := before.Add(d) // never below what was added
	c.UsageCounted = &counted
	if d == (usage.Counts{}) {
		return usage.Due{}, false
	}
	return usage.Due{AccountID: c.AccountID, Date: usage.Date(c.StartedAt), Counts: d}, true
}
