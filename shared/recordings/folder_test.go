package recordings

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/ident"
)

func TestFolder(t *testing.T) {
	now := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	f := &Folder{Dir: t.TempDir(), Secret: bytes.Repeat([]byte("k"), 32), Now: func() time.Time { return now }}
	mux := http.NewServeMux()
	mux.Handle(FolderPath, f.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.BaseURL = srv.URL

	key := Key(ident.New("acct"), ident.New("call"))
	body := []byte("OggS pretend audio")
	if err := f.Put(t.Context(), key, bytes.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
	get := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 200 && resp.Header.Get("Content-Type") != ContentType {
			t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, string(b)
	}
	u, exp, err := f.URL(t.Context(), key, MaxURLTTL)
	if err != nil || !exp.Equal(now.Add(MaxURLTTL)) {
		t.Fatalf("URL = %s, %v, %v", u, exp, err)
	}
	if code, got := get(u); code != 200 || got != string(body) {
		t.Errorf("before expiry: %d %q", code, got)
	}
	if code, _ := get(strings.Replace(u, "signature=", "signature=00", 1)); code != 403 {
		t.Errorf("tampered signature: %d, want 403", code)
	}
	other := Key(ident.New("acct"), ident.New("call"))
	if code, _ := get(strings.Replace(u, key, other, 1)); code != 403 {
		t.Errorf("another key with this signature: %d, want 403", code)
	}
	now = now.Add(MaxURLTTL - time.Second)
	if code, _ := get(u); code != 200 {
		t.Errorf("a second before expiry: %d", code)
	}
	now = now.Add(time.Second)
	if code, _ := get(u); code != 403 {
		t.Errorf("at expiry: %d, want 403", code)
	}
	if _, _, err := f.URL(t.Context(), key, MaxURLTTL+time.Second); err == nil {
		t.Error("a URL over 15 minutes was signed")
	}
	u, _, _ = f.URL(t.Context(), key, time.Minute)
	if ok, err := f.Exists(t.Context(), key); err != nil || !ok {
		t.Errorf("Exists before delete = %v, %v; want true", ok, err)
	}
	if err := f.Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete(t.Context(), key); err != nil {
		t.Errorf("second delete: %v", err)
	}
	if ok, err := f.Exists(t.Context(), key); err != nil || ok {
		t.Errorf("Exists after delete = %v, %v; want false", ok, err)
	}
	if _, err := f.Exists(t.Context(), "../etc/passwd"); err == nil {
		t.Error("Exists took a key Key did not make")
	}
	if code, _ := get(u); code != 404 {
		t.Errorf("after delete: %d, want 404", code)
	}
	if err := f.Put(t.Context(), "../../etc/passwd", bytes.NewReader(nil), 0); err == nil {
		t.Error("a key outside the pattern was written")
	}
}
