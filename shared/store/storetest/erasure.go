package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// deletedFiles records the recording keys erasure deletes.
type deletedFiles struct{ keys []string }

func (f *deletedFiles) Delete(_ context.Context, key string) error {
	f.keys = append(f.keys, key)
	return nil
}

// usageRedactedCall: an ended call in a session, with its usage counted, deleted
// (erasure.DeleteCall) twice: the stored call and session keep no number or transcript
// and say when they were redacted, the call keeps its usage, and the account's day
// still counts the call once.
func usageRedactedCall(t *testing.T, s UsageStore) {
	ses, c := newSessionPair(ident.New("acct"))
	start := c.StartedAt
	c.Answer(start.Add(time.Second))
	c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, start.Add(5*time.Second), func() string { return ident.New("evt") })
	c.CountUsage(persona.Usage{STTAudioMS: 900, LLMPromptTokens: 120})
	c.Transcript = []persona.Turn{{Speaker: persona.SpeakerCaller, Text: "hello"}}
	c.Recording = &call.Recording{Status: call.RecordingFailed, Failure: "no file"}
	ses.Status, ses.EndedAt = "ended", c.EndedAt
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	files := &deletedFiles{}
	svc := erasure.Service{Store: s, Files: files}
	for range 2 {
		if _, err := svc.DeleteCall(ctx(t), c.AccountID, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetCall(ctx(t), c.ID)
	if err != nil || !got.Redacted() || got.From != "" || got.To != "" || got.Transcript != nil || got.Usage == nil ||
		got.Usage.LLMPromptTokens != 120 || got.Usage.BillableSeconds != 4 || got.RecordingStatus() != call.RecordingDeleted {
		t.Errorf("call after DeleteCall = %+v (%v), want redacted with its usage", got, err)
	}
	gotSes, err := s.GetSession(ctx(t), ses.ID)
	if err != nil || gotSes.PlatformHandle != "" {
		t.Errorf("session after DeleteCall: handle %q (%v), want none", gotSes.PlatformHandle, err)
	}
	if len(files.keys) != 2 || files.keys[0] != c.AccountID+"/"+c.ID+".ogg" {
		t.Errorf("recording keys deleted: %v, want the call's, once per DELETE", files.keys)
	}
	days, err := s.UsageDays(ctx(t), c.AccountID, []string{usage.Date(start)})
	if err != nil || len(days) != 1 || days[0].Counts.Calls != 1 || days[0].Counts.LLMPromptTokens != 120 {
		t.Errorf("usage days after DeleteCall = %+v (%v), want the call counted once", days, err)
	}
}
