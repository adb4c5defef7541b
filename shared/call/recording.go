package call

import (
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Recording statuses (the record's recording; absent when the call is not recorded).
const (
	// RecordingPending: the call is recorded and its file is not stored yet (the call is
	// live, or its worker has not reported).
	RecordingPending = "pending"
	// RecordingAvailable: the file is stored; GET /v1/calls/{id}/recording hands out a
	// URL.
	RecordingAvailable = "available"
	// RecordingFailed: the worker stored no file (Recording.Failure says why), or never
	// reported; a report that comes later with the file still makes it available.
	RecordingFailed = "failed"
	// RecordingDeleted: DELETE /v1/calls/{id}/recording removed the file for good.
	RecordingDeleted = "deleted"
)

// Recording is a recorded call's file as the record knows it.
type Recording struct {
	Status string `json:"status"`
	// Key, Format, DurationMS and SizeBytes are the stored file's (shared/recordings).
	Key        string `json:"key,omitempty"`
	Format     string `json:"format,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	SizeBytes  int64  `json:"size_bytes,omitempty"`
	// Failure is why a failed recording has no file.
	Failure   string     `json:"failure,omitempty"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	// Gone is why a deleted recording went without a DELETE: its file was no longer in
	// the store (RecordingGone); empty for a DELETE.
	Gone string `json:"gone,omitempty"`
}

// RecordingStatus is the record's recording status, "" for a call not recorded.
func (c Call) RecordingStatus() string {
	if c.Recording == nil {
		return ""
	}
	return c.Recording.Status
}

// Record marks the call recorded (pending) when on, as its version is fixed; a call
// whose assistant records nothing has no recording.
func (c *Call) Record(on bool) {
	c.Recording = nil
	if on {
		c.Recording = &Recording{Status: RecordingPending}
	}
}

// RecordingReported applies what the worker's ended report says of the recording: its
// stored file makes a pending or failed one available; its error makes a pending one
// failed; a deleted one stays deleted. It reports whether the record changed, and whether
// the recording became available (recording.ready).
func (c *Call) RecordingReported(r *persona.RecordingResult) (changed, ready bool) {
	if r == nil || c.Recording == nil {
		return false, false
	}
	switch st := c.Recording.Status; {
	case st == RecordingDeleted || st == RecordingAvailable:
		return false, false
	case r.Key != "":
		c.Recording = &Recording{Status: RecordingAvailable, Key: r.Key, Format: r.Format, DurationMS: r.DurationMS, SizeBytes: r.SizeBytes}
		return true, true
	case st == RecordingPending:
		failure := r.Error
		if failure == "" {
			failure = "the persona worker stored no file"
		}
		c.Recording = &Recording{Status: RecordingFailed, Failure: failure}
		return true, false
	}
	return false, false
}

// RecordingReadyEvent is the recording.ready event of a call whose recording is
// available: what the file holds, never where (GET /v1/calls/{id}/recording signs a URL).
func (c Call) RecordingReadyEvent(eventID string, at time.Time) callevent.Event {
	r := c.Recording
	return c.event(callevent.TypeRecordingReady, eventID, at, callevent.RecordingReady{
		CallID: c.ID, SessionID: c.SessionID, LineID: c.LineID, Direction: c.Direction,
		DurationMS: r.DurationMS, SizeBytes: r.SizeBytes, Format: r.Format, Metadata: c.Metadata,
	})
}

// recordingEnded: a call that ends before it was answered has nothing recorded, so its
// recording goes (the field is absent); the worker's report changes nothing after.
func (c *Call) recordingEnded() {
	if c.Recording != nil && c.Recording.Status == RecordingPending && c.AnsweredAt == nil {
		c.Recording = nil
	}
}

// RecordingUnreported: the call ended and its worker's final report did not come in
// time (ReportMissing): a pending recording is failed, until a late report brings it.
func (c *Call) RecordingUnreported() {
	if c.Recording != nil && c.Recording.Status == RecordingPending {
		c.Recording = &Recording{Status: RecordingFailed, Failure: "the persona worker did not report the call's end"}
	}
}

// RecordingGone marks an available recording whose file the store no longer holds (its
// retention expired it, or it was removed behind the API's back) deleted at t, with why.
// It reports whether it changed the call: false unless available with that key.
func (c *Call) RecordingGone(key string, t time.Time, why string) bool {
	if c.RecordingStatus() != RecordingAvailable || c.Recording.Key != key {
		return false
	}
	c.Recording = &Recording{Status: RecordingDeleted, Key: key, DeletedAt: &t, Gone: why}
	return true
}

// DeleteRecording marks the recording deleted at t and returns the key of the file to
// remove ("" when none was stored). ok is false when there is no recording to delete:
// none, pending or failed.
func (c *Call) DeleteRecording(t time.Time) (key string, ok bool) {
	if c.Recording == nil {
		return "", false
	}
	switch c.Recording.Status {
	case RecordingAvailable:
		key = c.Recording.Key
		c.Recording = &Recording{Status: RecordingDeleted, Key: key, DeletedAt: &t}
		return key, true
	case RecordingDeleted:
		return c.Recording.Key, true
	}
	return "", false
}
