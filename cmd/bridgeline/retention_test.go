package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestAdminAccountRetention: an operator sets an account's call retention to 0 days on
// SQLite; the retention job then deletes the data of the account's ended calls (its
// recording file too) and leaves its live call, another account's call and, after the
// operator turns retention off, everything.
func TestAdminAccountRetention(t *testing.T) {
	data, run := adminOnSQLite(t)
	ctx := context.Background()
	acct, err := run("account", "create", "--name", "Retention Co")
	if err != nil {
		t.Fatal(err)
	}
	id := acct["account_id"].(string)
	otherAcct, err := run("account", "create", "--name", "Keeps Everything")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := run("account", "retention", id); err != nil || got["call_retention_days"] != nil {
		t.Fatalf("account retention = %v, %v; want off by default", got, err)
	}
	for _, bad := range []string{"-1", "forever", "3651"} {
		if _, err := run("account", "retention", id, "--days", bad); err == nil || !strings.Contains(err.Error(), "--days") {
			t.Errorf("--days %s: err = %v, want a refusal naming the flag", bad, err)
		}
	}

	s, err := sqlite.Open(ctx, filepath.Join(data, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	folder := &recordings.Folder{Dir: t.TempDir(), Secret: bytes.Repeat([]byte("k"), 32)}
	save := func(accountID, status string) call.Call {
		t.Helper()
		at := time.Now().UTC().Truncate(time.Millisecond)
		c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Inbound, LineID: "line_1",
			From: "+15550100009", To: "+15550100001", Media: "audio", Status: status, HandledBy: call.HandledByAssistant,
			Platform: "sim", StartedAt: at, AnsweredAt: &at, Transcript: []persona.Turn{{Speaker: "caller", Text: "hi"}}}
		if status == call.StatusEnded {
			c.EndedAt, c.Recording = &at, &call.Recording{Status: call.RecordingAvailable, Key: recordings.Key(accountID, c.ID)}
			body := []byte("OggS")
			if err := folder.Put(ctx, c.Recording.Key, bytes.NewReader(body), int64(len(body))); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SaveCall(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	ended, live, others := save(id, call.StatusEnded), save(id, call.StatusActive), save(otherAcct["account_id"].(string), call.StatusEnded)
	time.Sleep(5 * time.Millisecond) // the calls are older than a retention of 0 days

	svc := erasure.Service{Store: s, Files: folder}
	if n, err := svc.Retain(ctx, s); err != nil || n != 0 {
		t.Fatalf("Retain with retention off everywhere = %d, %v; want nothing", n, err)
	}
	if got, err := run("account", "retention", id, "--days", "0"); err != nil || got["call_retention_days"] != 0.0 {
		t.Fatalf("account retention --days 0 = %v, %v", got, err)
	}
	if n, err := svc.Retain(ctx, s); err != nil || n != 1 {
		t.Fatalf("Retain = %d, %v; want the one ended call redacted", n, err)
	}
	if c, err := s.GetCall(ctx, ended.ID); err != nil || !c.Redacted() || c.From != "" || c.Transcript != nil || c.RecordingStatus() != call.RecordingDeleted {
		t.Errorf("ended call after Retain = %+v (%v), want redacted", c, err)
	}
	if there, _ := folder.Exists(ctx, recordings.Key(id, ended.ID)); there {
		t.Error("ended call's recording file after Retain: still there")
	}
	for _, c := range []call.Call{live, others} {
		if got, err := s.GetCall(ctx, c.ID); err != nil || got.Redacted() || got.From == "" {
			t.Errorf("call %s (%s) after Retain = %+v (%v), want it whole", c.ID, c.Status, got, err)
		}
	}
	got, err := run("account", "retention", id)
	if err != nil || got["retained_through"] == nil {
		t.Errorf("account retention after a run = %v, %v; want retained_through set", got, err)
	}

	// The live call ends; the next run takes it (the mark stayed below it).
	lc, _ := s.GetCall(ctx, live.ID)
	lc.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, time.Now(), func() string { return ident.New("evt") })
	if err := s.SaveCall(ctx, lc, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Retain(ctx, s); err != nil || n != 1 {
		t.Errorf("Retain after the live call ended = %d, %v; want it redacted", n, err)
	}

	if _, err := run("account", "retention", id, "--days", "off"); err != nil {
		t.Fatal(err)
	}
	late := save(id, call.StatusEnded)
	time.Sleep(5 * time.Millisecond)
	if n, err := svc.Retain(ctx, s); err != nil || n != 0 {
		t.Errorf("Retain with retention off = %d, %v; want nothing", n, err)
	}
	if c, _ := s.GetCall(ctx, late.ID); c.Redacted() {
		t.Error("a call of an account with retention off was redacted")
	}
}
