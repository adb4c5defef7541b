package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/recordings"
)

// GET and DELETE /v1/calls/{id}/recording on the local stack's store (a folder served by
// the API's own route with HMAC-signed URLs): the URL downloads the file before its
// expiry and is 403 after; another account's key gets 404 recording_not_found and
// deletes nothing; DELETE is 204, the record says deleted, the file is gone (its URL
// 404) and GET is 404; a second DELETE is 204; a call not recorded, pending or failed
// is 404 on both.
func TestCallRecordingFolder(t *testing.T) {
	var ahead atomic.Int64 // the folder's clock, ahead of the real one
	folder := &recordings.Folder{Dir: t.TempDir(), Secret: bytes.Repeat([]byte("k"), 32),
		Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }}
	rc := newRecordingContract(t, folder, httpapi.Passthrough("recordings-file", folder.Handler(), recordings.FolderPatterns...))
	folder.BaseURL = rc.base
	id, body := rc.recordedCall(t)
	u := rc.download(t, id, body)
	ahead.Store(int64(recordings.MaxURLTTL))
	if code, _ := fetch(t, u); code != http.StatusForbidden {
		t.Errorf("URL after its expiry: %d, want 403", code)
	}
	ahead.Store(0)
	rc.deleteAndGone(t, id, body, http.StatusNotFound)
	rc.notRecorded(t)
	rc.expired(t, func(key string) {
		if err := os.Remove(filepath.Join(folder.Dir, filepath.FromSlash(key))); err != nil {
			t.Fatal(err)
		}
	})
}

// The same on AWS's store: S3 (moto) with presigned URLs of 15 minutes (X-Amz-Expires:
// moto does not enforce a presigned URL's expiry, S3 does).
func TestCallRecordingS3(t *testing.T) {
	endpoint := eventtest.StartMoto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint); o.UsePathStyle = true })
	bucket := "bridgeline-recordings-contract"
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	rc := newRecordingContract(t, &recordings.S3{Client: client, Bucket: bucket}, nil)
	id, body := rc.recordedCall(t)
	u := rc.download(t, id, body)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if q := pu.Query(); q.Get("X-Amz-Expires") != "900" || q.Get("X-Amz-Signature") == "" {
		t.Errorf("presigned URL %s: want X-Amz-Expires=900 and a signature", u)
	}
	rc.deleteAndGone(t, id, body, http.StatusNotFound)
	rc.notRecorded(t)
	// The bucket's lifecycle rule (RecordingRetentionDays) removes an object as S3 does
	// for any DeleteObject; moto does not run lifecycle rules, so the test removes it.
	rc.expired(t, func(key string) {
		if _, err := client.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
			t.Fatal(err)
		}
	})
}

type recordingContract struct {
	st          *stack
	files       recordings.Store
	base        string
	mine, other *contracttest.Contract
}

func newRecordingContract(t *testing.T, files recordings.Store, extra []httpapi.Route) *recordingContract {
	st := newStack(t, nil)
	routes := (&httpapi.Recordings{Service: call.Recordings{Store: st.store, Files: files}}).Routes()
	api := st.api.With(append(routes, extra...)...)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &recordingContract{st: st, files: files, base: srv.URL,
		mine: contracttest.New(t, srv.URL, st.key, routes), other: contracttest.New(t, srv.URL, st.otherKey, routes)}
}

// saveCall stores an ended assistant call of the account with rec as its recording.
func (rc *recordingContract) saveCall(t *testing.T, rec *call.Recording) string {
	t.Helper()
	at := time.Now().UTC().Truncate(time.Millisecond)
	c := call.Call{ID: ident.New("call"), AccountID: rc.st.acctID, Direction: call.Inbound, LineID: rc.st.lineID,
		From: "+15550100009", To: "+15550100001", Media: "audio", Status: call.StatusEnded,
		HandledBy: call.HandledByAssistant, Platform: "sim", PlatformCallID: ident.New("simc"), StartedAt: at,
		AnsweredAt: &at, EndedAt: &at, EndReason: call.ReasonRemoteHangup, EndedBy: call.EndedByRemote, Recording: rec}
	if err := rc.st.store.SaveCall(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// recordedCall stores a file and a call whose recording is available with it.
func (rc *recordingContract) recordedCall(t *testing.T) (string, []byte) {
	t.Helper()
	body := bytes.Repeat([]byte("OggS recorded call "), 500)
	id := ident.New("call")
	key := recordings.Key(rc.st.acctID, id)
	if err := rc.files.Put(t.Context(), key, bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	c := call.Call{ID: id, AccountID: rc.st.acctID, Direction: call.Inbound, LineID: rc.st.lineID,
		From: "+15550100009", To: "+15550100001", Media: "audio", Status: call.StatusEnded,
		HandledBy: call.HandledByAssistant, Platform: "sim", PlatformCallID: ident.New("simc"), StartedAt: at,
		AnsweredAt: &at, EndedAt: &at, EndReason: call.ReasonRemoteHangup, EndedBy: call.EndedByRemote,
		Recording: &call.Recording{Status: call.RecordingAvailable, Key: key, Format: "ogg_opus", DurationMS: 4200, SizeBytes: int64(len(body))}}
	if err := rc.st.store.SaveCall(t.Context(), c, nil); err != nil {
		t.Fatal(err)
	}
	return id, body
}

// download asks for the URL (and another account cannot) and checks it serves the file.
func (rc *recordingContract) download(t *testing.T, id string, body []byte) string {
	t.Helper()
	rc.other.Fail("GET", "/v1/calls/"+id+"/recording", "", 404, "resource_not_found")
	asked := time.Now()
	r := rc.mine.OK("GET", "/v1/calls/"+id+"/recording", "", 200)
	if r.Str("call_id") != id || r.Str("format") != "ogg_opus" || r.Body["duration_ms"] != float64(4200) ||
		r.Body["size_bytes"] != float64(len(body)) || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET recording: %s (Cache-Control %q)", r.Raw, r.Header.Get("Cache-Control"))
	}
	exp, err := time.Parse(time.RFC3339Nano, r.Str("expires_at"))
	if d := exp.Sub(asked); err != nil || d < recordings.MaxURLTTL-2*time.Second || d > recordings.MaxURLTTL+time.Second {
		t.Errorf("expires_at %q: %s after the request, want 15 minutes (%v)", r.Str("expires_at"), d, err)
	}
	u := r.Str("url")
	code, got := fetch(t, u)
	if code != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("URL %s: %d, %d bytes; want 200 and the file's %d", u, code, len(got), len(body))
	}
	return u
}

// deleteAndGone: another account's DELETE is 404 and leaves the file; the account's is
// 204, the record says deleted, the URL finds nothing (goneCode), GET is 404, and a
// second DELETE is 204.
func (rc *recordingContract) deleteAndGone(t *testing.T, id string, body []byte, goneCode int) {
	t.Helper()
	path := "/v1/calls/" + id + "/recording"
	rc.other.Fail("DELETE", path, "", 404, "resource_not_found")
	u := rc.mine.OK("GET", path, "", 200).Str("url")
	if code, got := fetch(t, u); code != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("after another account's DELETE the URL answers %d", code)
	}
	rc.mine.OK("DELETE", path, "", 204)
	c, err := rc.st.store.GetCall(t.Context(), id)
	if err != nil || c.RecordingStatus() != call.RecordingDeleted || c.Recording.DeletedAt == nil {
		t.Errorf("record after DELETE: %+v, %v; want recording deleted", c.Recording, err)
	}
	if code, _ := fetch(t, u); code != goneCode {
		t.Errorf("URL after DELETE: %d, want %d", code, goneCode)
	}
	rc.mine.Fail("GET", path, "", 404, "recording_not_found")
	rc.mine.OK("DELETE", path, "", 204)
}

// notRecorded: a call not recorded, one whose file is pending and one that failed are
// 404 recording_not_found on GET and DELETE; an id that is no call is 404
// resource_not_found.
func (rc *recordingContract) notRecorded(t *testing.T) {
	t.Helper()
	for _, id := range []string{
		rc.saveCall(t, nil),
		rc.saveCall(t, &call.Recording{Status: call.RecordingPending}),
		rc.saveCall(t, &call.Recording{Status: call.RecordingFailed, Failure: "the recording could not be stored"}),
	} {
		rc.mine.Fail("GET", "/v1/calls/"+id+"/recording", "", 404, "recording_not_found")
		rc.mine.Fail("DELETE", "/v1/calls/"+id+"/recording", "", 404, "recording_not_found")
	}
	unknown := ident.New("call")
	rc.mine.Fail("GET", "/v1/calls/"+unknown+"/recording", "", 404, "resource_not_found")
	rc.mine.Fail("DELETE", "/v1/calls/"+unknown+"/recording", "", 404, "resource_not_found")
}

// expired: a recording whose file the store's retention removed (remove, behind the
// API's back) is 404 recording_not_found on GET, never a URL to nothing, and the record
// says deleted from then on, with the reason on every later GET; DELETE is 204.
func (rc *recordingContract) expired(t *testing.T, remove func(key string)) {
	t.Helper()
	id, _ := rc.recordedCall(t)
	path := "/v1/calls/" + id + "/recording"
	rc.mine.OK("GET", path, "", 200)
	remove(recordings.Key(rc.st.acctID, id))
	for range 2 {
		r := rc.mine.Fail("GET", path, "", 404, "recording_not_found")
		if !strings.Contains(string(r.Raw), call.RecordingExpired) {
			t.Errorf("GET an expired recording: %s, want the reason %q", r.Raw, call.RecordingExpired)
		}
		c, err := rc.st.store.GetCall(t.Context(), id)
		if err != nil || c.RecordingStatus() != call.RecordingDeleted || c.Recording.Gone != call.RecordingExpired || c.Recording.DeletedAt == nil {
			t.Fatalf("record after GET found the file gone: %+v, %v; want deleted, gone by retention", c.Recording, err)
		}
	}
	rc.mine.OK("DELETE", path, "", 204)
}

func fetch(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
