package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/recording"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings"
)

// RecordingStore keeps a recorded call's file (shared/recordings: an S3 bucket on AWS,
// the local stack's folder).
type RecordingStore interface {
	Put(ctx context.Context, key string, body io.Reader, size int64) error
}

// uploadTimeout bounds the upload of a recording; the ended report waits for it.
const uploadTimeout = 60 * time.Second

// callRecording is a recorded call's file while the call runs: both sides written to a
// temporary file as they come (the caller's as the listener hands it on, the assistant's
// as the speaker sends it), stored when the call ends.
type callRecording struct {
	mu   sync.Mutex
	file *os.File
	rec  *recording.Recorder
}

// startRecording starts the file, its second zero the call's answer. Audio handed in
// before is dropped.
func (c *call) startRecording() error {
	if !c.job.Recording || c.r.cfg.Recordings == nil {
		return nil
	}
	f, err := os.CreateTemp("", "call-*.ogg")
	if err != nil {
		return fmt.Errorf("recording file: %w", err)
	}
	c.mu.Lock()
	start := c.answered
	c.mu.Unlock()
	rec, err := recording.New(f, start)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	c.recording.mu.Lock()
	c.recording.file, c.recording.rec = f, rec
	c.recording.mu.Unlock()
	return nil
}

// recordSide hands one side's audio to the file, if the call is recorded.
func (c *call) recordSide(ch recording.Channel, pcm []int16, rate int, at time.Time) {
	c.recording.mu.Lock()
	rec := c.recording.rec
	c.recording.mu.Unlock()
	if rec != nil {
		rec.Write(ch, pcm, rate, at)
	}
}

// storeRecording closes the file at end and stores it; called once the media loops
// stopped. nil when the call is not recorded.
func (c *call) storeRecording(end time.Time) *persona.RecordingResult {
	if !c.job.Recording {
		return nil
	}
	if c.r.cfg.Recordings == nil {
		c.log.Error("the call is to be recorded but the worker has no recording store (RECORDINGS_*)")
		return &persona.RecordingResult{Error: "the persona worker has no recording store"}
	}
	c.recording.mu.Lock()
	f, rec := c.recording.file, c.recording.rec
	c.recording.file, c.recording.rec = nil, nil
	c.recording.mu.Unlock()
	if rec == nil {
		return &persona.RecordingResult{Error: "the call ended before it was answered"}
	}
	defer os.Remove(f.Name())
	defer f.Close()
	info, err := rec.Close(end)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		c.log.Error("recording not written", "err", err)
		return &persona.RecordingResult{Error: "the recording could not be written"}
	}
	key := recordings.Key(c.job.AccountID, c.job.CallID)
	ctx, cancel := context.WithTimeout(context.Background(), uploadTimeout)
	defer cancel()
	started := time.Now()
	if err := c.r.cfg.Recordings.Put(ctx, key, f, info.Bytes); err != nil {
		c.log.Error("recording not stored", "key", key, "err", err)
		return &persona.RecordingResult{Error: "the recording could not be stored"}
	}
	c.log.Info("recording stored", "key", key, "bytes", info.Bytes, "duration_ms", info.Duration.Milliseconds(),
		"upload_ms", time.Since(started).Milliseconds())
	return &persona.RecordingResult{Key: key, Format: recording.Format, DurationMS: info.Duration.Milliseconds(), SizeBytes: info.Bytes}
}
