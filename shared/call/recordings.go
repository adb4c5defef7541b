package call

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// RecordingFiles is what Recordings needs of the recordings' store (shared/recordings:
// an S3 bucket on AWS, a folder on the local stack).
type RecordingFiles interface {
	// URL is a GET URL of key that works until the time returned, ttl from now.
	URL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
	// Delete removes key for good; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
	// Exists reports whether key is stored (false once the store's retention removed it).
	Exists(ctx context.Context, key string) (bool, error)
}

// RecordingURLTTL is how long a download URL works (at most recordings.MaxURLTTL).
const RecordingURLTTL = 15 * time.Minute

// RecordingStore is what Recordings needs of the call records.
type RecordingStore interface {
	GetCall(ctx context.Context, id string) (Call, error)
	SaveCall(ctx context.Context, c Call, evts []callevent.Event) error
}

// Recordings serves an account's call recordings: a download URL of an available one,
// and its deletion for good (GET and DELETE /v1/calls/{id}/recording).
type Recordings struct {
	Store RecordingStore
	Files RecordingFiles
	Now   func() time.Time
}

// Download is an available recording's download URL and what the file holds.
type Download struct {
	CallID     string
	URL        string
	ExpiresAt  time.Time
	DurationMS int64
	SizeBytes  int64
	Format     string
}

func recordingNotFound(id, why string) error {
	return &apierr.Error{Code: apierr.CodeRecordingNotFound, Param: "id",
		Message: fmt.Sprintf("call %q has no recording: %s", id, why)}
}

// get reads the account's call; another account's, or none, is resource_not_found, as
// on every other route of a call.
func (s Recordings) get(ctx context.Context, accountID, id string) (Call, error) {
	c, err := s.Store.GetCall(ctx, id)
	return apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id))
}

// whyNot says why a call's recording cannot be downloaded or deleted.
func whyNot(c Call) string {
	if c.Recording == nil {
		return "the call was not recorded (or ended before it was answered)"
	}
	switch c.Recording.Status {
	case RecordingPending:
		return "it is not stored yet (recording.ready says when it is)"
	case RecordingFailed:
		return "recording failed: " + c.Recording.Failure
	case RecordingDeleted:
		if c.Recording.Gone != "" {
			return c.Recording.Gone
		}
		return "it was deleted"
	}
	return c.Recording.Status
}

// RecordingExpired is why a recording whose file the store no longer holds is deleted:
// the store's retention (S3's lifecycle rule, RecordingRetentionDays) removed it, or
// someone did behind the API's back.
const RecordingExpired = "its file is no longer stored: the deployment's retention removed it"

// URL hands out a download URL of the call's available recording, working for
// RecordingURLTTL. The store is asked first whether the file is still there: one its
// retention removed makes the record's recording deleted (with the reason) and is
// recording_not_found, never a URL to nothing. Errors: resource_not_found (no such call
// for the account), recording_not_found (no available recording).
func (s Recordings) URL(ctx context.Context, accountID, id string) (Download, error) {
	c, err := s.get(ctx, accountID, id)
	if err != nil {
		return Download{}, err
	}
	if c.RecordingStatus() != RecordingAvailable {
		return Download{}, recordingNotFound(id, whyNot(c))
	}
	r := c.Recording
	there, err := s.Files.Exists(ctx, r.Key)
	if err != nil {
		return Download{}, fmt.Errorf("look for the recording of %s: %w", id, err)
	}
	if !there {
		return Download{}, s.gone(ctx, accountID, id, r.Key)
	}
	url, exp, err := s.Files.URL(ctx, r.Key, RecordingURLTTL)
	if err != nil {
		return Download{}, fmt.Errorf("sign the recording URL of %s: %w", id, err)
	}
	return Download{CallID: c.ID, URL: url, ExpiresAt: exp, DurationMS: r.DurationMS, SizeBytes: r.SizeBytes, Format: r.Format}, nil
}

// Delete removes the call's recording for good: the record says deleted first (so no
// URL is handed out after), then the file goes. Deleting a deleted recording deletes its
// file again, so a retry after a failure between the two finishes the job. Errors:
// resource_not_found (no such call for the account), recording_not_found (not
// recorded, pending or failed).
func (s Recordings) Delete(ctx context.Context, accountID, id string) error {
	var key string
	err := retry.OnConflict(func() error {
		c, err := s.get(ctx, accountID, id)
		if err != nil {
			return err
		}
		before := c.RecordingStatus()
		k, ok := c.DeleteRecording(s.now())
		if !ok {
			return recordingNotFound(id, whyNot(c))
		}
		key = k
		if before == RecordingDeleted {
			return nil
		}
		return s.Store.SaveCall(ctx, c, nil)
	})
	if err != nil {
		return err
	}
	if key == "" {
		return nil
	}
	if err := s.Files.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete the recording of %s: %w", id, err)
	}
	return nil
}

// gone records that the available recording of call id, stored under key, is no longer
// in the store: deleted, with RecordingExpired, in a conditional write (a DELETE or
// another GET meanwhile leaves it as they made it), and answers recording_not_found.
func (s Recordings) gone(ctx context.Context, accountID, id, key string) error {
	err := retry.OnConflict(func() error {
		c, err := s.get(ctx, accountID, id)
		if err != nil {
			return err
		}
		if !c.RecordingGone(key, s.now(), RecordingExpired) {
			return nil
		}
		return s.Store.SaveCall(ctx, c, nil)
	})
	if err != nil {
		return fmt.Errorf("mark the recording of %s deleted: %w", id, err)
	}
	return recordingNotFound(id, RecordingExpired)
}

func (s Recordings) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return time.Now().UTC().Truncate(time.Millisecond)
}
