package httpapi_test

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings"
	"github.com/bridgeline/bridgeline/shared/session"
)

// DELETE /v1/calls/{id} on SQLite and the local recordings folder: another account's
// key is 404 and changes nothing; the account's is 200 with the record redacted (no
// numbers, transcript, variables or analysis content, the recording deleted and its file
// gone, metadata without the numbered pair) while its ids, times, status and usage stay;
// the session loses its number; a second DELETE answers the same; a live call, and an
// ended one whose worker's report is awaited, are 409 call_in_progress and keep
// everything.
func TestDeleteCallData(t *testing.T) {
	st := newStack(t, nil)
	folder := &recordings.Folder{Dir: t.TempDir(), Secret: bytes.Repeat([]byte("k"), 32)}
	routes := (&httpapi.CallErasure{Service: erasure.Service{Store: st.store, Files: folder}}).Routes()
	srv := httptest.NewServer(st.api.With(routes...).Handler())
	t.Cleanup(srv.Close)
	mine, other := contracttest.New(t, srv.URL, st.key, routes), contracttest.New(t, srv.URL, st.otherKey, routes)
	ctx := t.Context()

	save := func(status string, held bool) (session.Session, call.Call) {
		t.Helper()
		at := time.Now().UTC().Truncate(time.Millisecond)
		id := ident.New("call")
		key := recordings.Key(st.acctID, id)
		body := []byte("OggS recorded call")
		if err := folder.Put(ctx, key, bytes.NewReader(body), int64(len(body))); err != nil {
			t.Fatal(err)
		}
		yes := true
		c := call.Call{ID: id, AccountID: st.acctID, Direction: call.Outbound, LineID: st.lineID, From: "+15550100001",
			To: "+15550100009", Media: "audio", Status: status, HandledBy: call.HandledByAssistant, Platform: "sim",
			PlatformCallID: ident.New("simc"), StartedAt: at, AnsweredAt: &at,
			Transcript:      []persona.Turn{{Speaker: persona.SpeakerCaller, Text: "call me back on 555 010 0009"}},
			AssistantReport: call.ReportReceived, Variables: map[string]string{"caller_name": "Ada"},
			Transfer:  &call.Transfer{To: "+15550100042", Status: call.TransferFailed, RequestedAt: at, By: "customer", Failure: "+15550100042 busy"},
			Analysis:  &call.Analysis{Status: persona.AnalysisCompleted, Summary: "Ada wants a call back", Success: &yes},
			Recording: &call.Recording{Status: call.RecordingAvailable, Key: key, Format: "ogg_opus", SizeBytes: int64(len(body))},
			Metadata:  metadata.Metadata{"order_id": "6735", "callback": "+15550100009"},
			Usage:     &call.Usage{DurationMS: 4200, BillableSeconds: 5}}
		ses := session.Session{ID: ident.New("ses"), AccountID: st.acctID, CallID: c.ID, LineID: st.lineID,
			Mode: session.ModeAssistant, Media: "audio", PlatformHandle: "+15550100009", Status: status, CreatedAt: at,
			Metadata: metadata.Metadata{"crm": "+15550100009", "order_id": "6735"}}
		if status != call.StatusActive {
			c.EndedAt, c.EndReason, c.EndedBy, ses.EndedAt = &at, call.ReasonRemoteHangup, call.EndedByRemote, &at
		}
		if held {
			due := at.Add(time.Minute)
			ses.ReportDueAt = &due
		}
		c.SessionID = ses.ID
		if err := st.store.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return ses, c
	}

	ses, c := save(call.StatusEnded, false)
	path := "/v1/calls/" + c.ID
	other.Fail("DELETE", path, "", 404, "resource_not_found")
	if got, _ := st.store.GetCall(ctx, c.ID); got.Redacted() || got.From == "" {
		t.Fatalf("another account's DELETE changed the call: %+v", got)
	}
	r := mine.OK("DELETE", path, "", 200)
	b := r.Body
	if b["redacted_at"] == nil || b["from"] != "" || b["to"] != "" || b["id"] != c.ID || b["status"] != "ended" ||
		b["end_reason"] != call.ReasonRemoteHangup || b["recording"] != call.RecordingDeleted || b["started_at"] == nil {
		t.Errorf("DELETE = %s, want the ended record, redacted", r.Raw)
	}
	if tr, _ := b["transcript"].([]any); len(tr) != 0 {
		t.Errorf("transcript after DELETE = %v, want none", b["transcript"])
	}
	if a, _ := b["analysis"].(map[string]any); a["status"] != persona.AnalysisCompleted || a["summary"] != nil || a["success"] != nil {
		t.Errorf("analysis after DELETE = %v, want its status only", b["analysis"])
	}
	if m, _ := b["metadata"].(map[string]any); len(m) != 1 || m["order_id"] != "6735" {
		t.Errorf("metadata after DELETE = %v, want {order_id: 6735} (the number's pair gone)", b["metadata"])
	}
	if tf, _ := b["transfer"].(map[string]any); tf["to"] != "" || tf["failure"] != nil || tf["status"] != call.TransferFailed {
		t.Errorf("transfer after DELETE = %v, want its status without the number", b["transfer"])
	}
	if u, _ := b["usage"].(map[string]any); u["billable_seconds"] != float64(5) {
		t.Errorf("usage after DELETE = %v, want it kept for billing", b["usage"])
	}
	if there, err := folder.Exists(ctx, recordings.Key(st.acctID, c.ID)); err != nil || there {
		t.Errorf("recording file after DELETE: there %v (%v), want gone", there, err)
	}
	stored, err := st.store.GetCall(ctx, c.ID)
	if err != nil || stored.Recording.Key != "" || len(stored.Variables) != 0 || stored.Transcript != nil {
		t.Errorf("stored call after DELETE = %+v (%v), want no key, variables or transcript", stored, err)
	}
	gotSes, err := st.store.GetSession(ctx, ses.ID)
	if err != nil || gotSes.PlatformHandle != "" || len(gotSes.Metadata) != 1 || gotSes.Metadata["order_id"] != "6735" {
		t.Errorf("session after DELETE = handle %q metadata %v (%v), want no number", gotSes.PlatformHandle, gotSes.Metadata, err)
	}
	again := mine.OK("DELETE", path, "", 200)
	if !bytes.Equal(again.Raw, r.Raw) {
		t.Errorf("second DELETE = %s, want the same as the first %s", again.Raw, r.Raw)
	}
	mine.Fail("DELETE", "/v1/calls/"+ident.New("call"), "", 404, "resource_not_found")

	for name, held := range map[string]bool{call.StatusActive: false, "held": true} {
		status := call.StatusEnded
		if name == call.StatusActive {
			status = call.StatusActive
		}
		_, c := save(status, held)
		mine.Fail("DELETE", "/v1/calls/"+c.ID, "", 409, "call_in_progress")
		got, err := st.store.GetCall(ctx, c.ID)
		if err != nil || got.Redacted() || got.From == "" || len(got.Transcript) == 0 {
			t.Errorf("%s call after a refused DELETE = %+v (%v), want it whole", name, got, err)
		}
		if there, _ := folder.Exists(ctx, recordings.Key(st.acctID, c.ID)); !there {
			t.Errorf("%s call's recording after a refused DELETE: gone, want kept", name)
		}
	}
}
