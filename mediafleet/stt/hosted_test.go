package stt

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// whisperServer speaks OpenAI's transcription API: it parses the multipart form, checks
// the WAV and answers with the number of samples it got, so the test sees exactly what
// the client sent.
type whisperServer struct {
	mu sync.Mutex
	// what the last request carried
	auth, model, filename string
	rate, channels, bits  int
	samples               []int16
	status                int // answer with this status when set
}

func (s *whisperServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if err := r.ParseMultipartForm(10 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth, s.model, s.filename = r.Header.Get("Authorization"), r.FormValue("model"), hdr.Filename
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		http.Error(w, "not a WAV", http.StatusBadRequest)
		return
	}
	if got, want := int(binary.LittleEndian.Uint32(b[4:])), len(b)-8; got != want {
		http.Error(w, fmt.Sprintf("RIFF size %d, file holds %d", got, want), http.StatusBadRequest)
		return
	}
	s.channels = int(binary.LittleEndian.Uint16(b[22:]))
	s.rate = int(binary.LittleEndian.Uint32(b[24:]))
	s.bits = int(binary.LittleEndian.Uint16(b[34:]))
	n := int(binary.LittleEndian.Uint32(b[40:]))
	if n != len(b)-44 {
		http.Error(w, "data size mismatch", http.StatusBadRequest)
		return
	}
	s.samples = make([]int16, n/2)
	for i := range s.samples {
		s.samples[i] = int16(binary.LittleEndian.Uint16(b[44+2*i:]))
	}
	if s.status != 0 {
		http.Error(w, `{"error":{"message":"overloaded"}}`, s.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"text":"  heard %d samples "}`, len(s.samples))
}

func TestHostedTranscribes(t *testing.T) {
	ws := &whisperServer{}
	srv := httptest.NewServer(ws)
	defer srv.Close()
	h, err := NewHosted(HostedConfig{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "whisper-large-v3"})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := h.NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	// An aborted turn sends nothing and leaves nothing behind.
	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Write(make([]int16, 999)); err != nil {
		t.Fatal(err)
	}
	tr.Abort()

	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	want := make([]int16, 0, 3*Rate/2)
	for i := range 3 * Rate / 2 {
		want = append(want, int16(i*37%65536-32768))
	}
	for i := 0; i < len(want); i += 320 {
		if err := tr.Write(want[i:min(i+320, len(want))]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tr.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := fmt.Sprintf("heard %d samples", len(want)); got != w {
		t.Errorf("End = %q, want %q", got, w)
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, c := range []struct{ name, got, want string }{
		{"Authorization", ws.auth, "Bearer sk-test"},
		{"model", ws.model, "whisper-large-v3"},
		{"filename", ws.filename, "turn.wav"},
		{"format", fmt.Sprintf("%d Hz %d ch %d bit", ws.rate, ws.channels, ws.bits), "16000 Hz 1 ch 16 bit"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(ws.samples) != len(want) {
		t.Fatalf("server got %d samples, want %d", len(ws.samples), len(want))
	}
	for i := range want {
		if ws.samples[i] != want[i] {
			t.Fatalf("sample %d = %d, want %d", i, ws.samples[i], want[i])
		}
	}
}

func TestHostedErrors(t *testing.T) {
	ws := &whisperServer{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(ws)
	defer srv.Close()
	h, err := NewHosted(HostedConfig{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := h.NewTranscriber(context.Background())
	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	tr.Write(make([]int16, 320))
	_, err = tr.End(context.Background())
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("End against a 503 = %v, want an error naming the status", err)
	}
	ws.mu.Lock()
	if ws.auth != "" || ws.model != "whisper-1" {
		t.Errorf("no key and no model: sent Authorization %q model %q, want none and whisper-1", ws.auth, ws.model)
	}
	ws.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr.Begin()
	if _, err := tr.End(ctx); err == nil {
		t.Error("End with a cancelled context succeeded")
	}

	for _, bad := range []string{"", "ftp://x/v1", "not a url"} {
		if _, err := NewHosted(HostedConfig{BaseURL: bad}); err == nil {
			t.Errorf("NewHosted(%q) succeeded, want an error", bad)
		}
	}
}
