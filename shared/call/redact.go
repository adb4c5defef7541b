package call

import (
	"time"

	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/recordings/reckey"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// Redacted reports whether the call's data was deleted (DELETE /v1/calls/{id}, or the
// account's retention).
func (c Call) Redacted() bool { return c.RedactedAt != nil }

// Redact deletes what the record keeps of the people on the call and of what they said,
// at t: the numbers (from, to, the transfer's destination, metadata values holding a
// number), the transcript, the rendered variables, the analysis's content (its status
// stays), and the recording's key (a recording the call had reads deleted). What billing
// and support need stays: ids, times, status, end reason, who ended it, metrics and
// usage. It returns the key of the recording file to remove, which is always where
// reckey.For puts it (the report's key is checked against it), and whether the
// record changed. Redacting a redacted call changes nothing but what a later report
// brought (RedactAgain).
func (c *Call) Redact(t time.Time) (recordingKey string, changed bool) {
	if c.RedactedAt == nil {
		c.RedactedAt = &t
		changed = true
	}
	if c.strip(*c.RedactedAt) {
		changed = true
	}
	return reckey.For(c.AccountID, c.ID), changed
}

// RedactAgain strips what a report that came after the call was redacted brought (a
// late transcript, analysis or recording): a redacted call stays redacted.
func (c *Call) RedactAgain() {
	if c.RedactedAt != nil {
		c.strip(*c.RedactedAt)
	}
}

// strip removes the data Redact deletes and reports whether there was any.
func (c *Call) strip(at time.Time) bool {
	changed := false
	set := func(p *string) {
		if *p != "" {
			*p, changed = "", true
		}
	}
	set(&c.From)
	set(&c.To)
	if c.Transcript != nil {
		c.Transcript, changed = nil, true
	}
	if c.Variables != nil {
		c.Variables, changed = nil, true
	}
	if c.Transfer != nil {
		set(&c.Transfer.To)
		set(&c.Transfer.Failure)
	}
	if a := c.Analysis; a != nil && (a.Summary != "" || a.StructuredData != nil || a.Success != nil || a.Error != "") {
		c.Analysis, changed = &Analysis{Status: a.Status}, true
	}
	if r := c.Recording; r != nil && (r.Status != RecordingDeleted || r.Key != "" || r.Failure != "") {
		deleted := at
		if r.Status == RecordingDeleted && r.DeletedAt != nil {
			deleted = *r.DeletedAt
		}
		c.Recording, changed = &Recording{Status: RecordingDeleted, DeletedAt: &deleted}, true
	}
	if m, ok := WithoutNumbers(c.Metadata); ok {
		c.Metadata, changed = m, true
	}
	return changed
}

// WithoutNumbers is m without the pairs whose value holds a phone number
// (redact.HasNumber), and whether any went. The customer's other pairs (an order id, a
// ticket) stay, so a redacted call can still be matched to the customer's own records.
func WithoutNumbers(m metadata.Metadata) (metadata.Metadata, bool) {
	var out metadata.Metadata
	removed := false
	for k, v := range m {
		if redact.HasNumber(v) || redact.HasNumber(k) {
			removed = true
			continue
		}
		if out == nil {
			out = metadata.Metadata{}
		}
		out[k] = v
	}
	if !removed {
		return m, false
	}
	return out, true
}
