// Package erasure deletes what Bridgeline keeps of the people on a customer's calls:
// DELETE /v1/calls/{id}, and the account's retention (Retain), which deletes the same
// after a number of days. The record stays for billing (ids, times, status, end reason,
// usage); its numbers, transcript, analysis and recording go (call.Call.Redact), and so
// do the number and numbered metadata its session keeps.
package erasure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/retry"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Store is what the service needs of the records: a call, its session, and the writes
// of either (a call in a session is written with it, in one transaction).
type Store interface {
	GetCall(ctx context.Context, id string) (call.Call, error)
	SaveCall(ctx context.Context, c call.Call, evts []callevent.Event) error
	GetSession(ctx context.Context, id string) (session.Session, error)
	SaveSession(ctx context.Context, s session.Session, c call.Call, evts []callevent.Event) error
}

// Files is what the service needs of the recordings' store: Delete, for good; a key that
// is not there is no error.
type Files interface {
	Delete(ctx context.Context, key string) error
}

// Service deletes calls' data.
type Service struct {
	Store Store
	Files Files
	Now   func() time.Time
	Log   *slog.Logger
}

// DeleteCall deletes the data of the account's call id and returns the redacted record.
// A recorded call's file goes first (where reckey.For keeps it, whatever the record
// says, so a file whose report came after the call's end goes too), then the record and its session are
// written redacted in one conditional write: a failure between the two leaves the record
// as it was, and a retry finishes the job. Deleting a redacted call answers the same
// record again.
//
// Errors: resource_not_found (no such call for the account); call_in_progress while the
// call is live (ending it is DELETE /v1/sessions/{id}'s job, not a side effect of a
// deletion; and a live call would go on adding what was deleted) or while its ended
// assistant's final report or analysis is still awaited (the sweeper settles that within
// its report wait).
func (s Service) DeleteCall(ctx context.Context, accountID, id string) (call.Call, error) {
	var out call.Call
	err := retry.OnConflict(func() error {
		c, err := s.Store.GetCall(ctx, id)
		if c, err = apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id)); err != nil {
			return err
		}
		out, err = s.redact(ctx, c)
		return err
	})
	return out, err
}

// redact deletes c's data (DeleteCall's write, and Retain's).
func (s Service) redact(ctx context.Context, c call.Call) (call.Call, error) {
	var ses session.Session
	if c.SessionID != "" {
		var err error
		if ses, err = s.Store.GetSession(ctx, c.SessionID); err != nil && !errors.Is(err, apierr.ErrNotFound) {
			return call.Call{}, fmt.Errorf("read session %s: %w", c.SessionID, err)
		} else if err != nil {
			c.SessionID, ses = "", session.Session{} // the record names a session that is gone: write the call alone
		}
	}
	if err := inProgress(c, ses); err != nil {
		return call.Call{}, err
	}
	recorded := c.Recording != nil
	key, changed := c.Redact(s.now())
	if recorded {
		if err := s.Files.Delete(ctx, key); err != nil {
			return call.Call{}, fmt.Errorf("delete the recording of %s: %w", c.ID, err)
		}
	}
	sesChanged := ses.ID != "" && redactSession(&ses)
	if !changed && !sesChanged {
		return c, nil
	}
	var err error
	if ses.ID != "" {
		err = s.Store.SaveSession(ctx, ses, c, nil)
	} else {
		err = s.Store.SaveCall(ctx, c, nil)
	}
	if err != nil {
		return call.Call{}, err
	}
	c.Revision++
	return c, nil
}

// inProgress refuses a call whose data is still coming.
func inProgress(c call.Call, ses session.Session) error {
	if !c.Over() {
		return &apierr.Error{Code: apierr.CodeCallInProgress, Param: "id", Message: fmt.Sprintf(
			"call %q is %s: end it first (DELETE /v1/sessions/{id}), then delete its data", c.ID, c.Status)}
	}
	if ses.ID != "" && (ses.Held() || ses.AnalysisDueAt != nil) {
		return &apierr.Error{Code: apierr.CodeCallInProgress, Param: "id", Message: fmt.Sprintf(
			"call %q has ended and its assistant's final report or analysis is still awaited: retry after call.ended (or call.analyzed)", c.ID)}
	}
	return nil
}

// redactSession removes the number and the numbered metadata a call's session keeps, and
// reports whether there were any.
func redactSession(ses *session.Session) bool {
	changed := false
	if ses.PlatformHandle != "" {
		ses.PlatformHandle, changed = "", true
	}
	if m, ok := call.WithoutNumbers(ses.Metadata); ok {
		ses.Metadata, changed = m, true
	}
	return changed
}

func (s Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return time.Now().UTC().Truncate(time.Millisecond)
}

func (s Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
