package openai

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// speechServer speaks OpenAI's speech API: it decodes the JSON request, keeps it, and
// answers with audio whose samples encode the request (its length follows the input), in
// the format the test chooses.
type speechServer struct {
	mu   sync.Mutex
	got  []map[string]string
	auth string
	// wav: answer as a WAV at this rate (0: raw pcm as asked)
	wav    int
	status int
}

func samplesFor(input string) []int16 {
	out := make([]int16, 100*len(input))
	for i := range out {
		out[i] = int16(int(input[i%len(input)])*100 - i%7)
	}
	return out
}

func (s *speechServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/speech" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var req map[string]string
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.got = append(s.got, req)
	s.auth = r.Header.Get("Authorization")
	s.mu.Unlock()
	if s.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		w.Write([]byte(`{"error":{"message":"rate limited"}}`))
		return
	}
	pcm := samplesFor(req["input"])
	data := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(data[2*i:], uint16(v))
	}
	if s.wav == 0 {
		w.Header().Set("Content-Type", "audio/pcm")
		w.Write(data)
		return
	}
	hdr := make([]byte, 44)
	copy(hdr, "RIFF")
	binary.LittleEndian.PutUint32(hdr[4:], 0xFFFFFFFF) // streamed: sizes unknown
	copy(hdr[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(hdr[16:], 16)
	binary.LittleEndian.PutUint16(hdr[20:], 1)
	binary.LittleEndian.PutUint16(hdr[22:], 1)
	binary.LittleEndian.PutUint32(hdr[24:], uint32(s.wav))
	binary.LittleEndian.PutUint32(hdr[28:], uint32(2*s.wav))
	binary.LittleEndian.PutUint16(hdr[32:], 2)
	binary.LittleEndian.PutUint16(hdr[34:], 16)
	copy(hdr[36:], "data")
	binary.LittleEndian.PutUint32(hdr[40:], 0xFFFFFFFF)
	w.Header().Set("Content-Type", "audio/wav")
	w.Write(append(hdr, data...))
}

func TestSynthesize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wav      int
		wantRate int
	}{
		{"pcm as asked", 0, PCMRate},
		{"streamed wav instead", 22050, 22050},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &speechServer{wav: tc.wav}
			srv := httptest.NewServer(ss)
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "sk-tts", Model: "gpt-4o-mini-tts"})
			if err != nil {
				t.Fatal(err)
			}
			text := "Your table is booked."
			pcm, err := c.Voice("nova").Synthesize(context.Background(), "  "+text+"\n")
			if err != nil {
				t.Fatal(err)
			}
			if pcm.Rate != tc.wantRate {
				t.Errorf("rate %d, want %d", pcm.Rate, tc.wantRate)
			}
			want := samplesFor(text)
			if len(pcm.Samples) != len(want) {
				t.Fatalf("%d samples, want %d", len(pcm.Samples), len(want))
			}
			for i := range want {
				if pcm.Samples[i] != want[i] {
					t.Fatalf("sample %d = %d, want %d", i, pcm.Samples[i], want[i])
				}
			}
			ss.mu.Lock()
			defer ss.mu.Unlock()
			wantReq := map[string]string{"model": "gpt-4o-mini-tts", "voice": "nova", "input": text, "response_format": "pcm"}
			if len(ss.got) != 1 || len(ss.got[0]) != len(wantReq) {
				t.Fatalf("requests %v, want one %v", ss.got, wantReq)
			}
			for k, v := range wantReq {
				if ss.got[0][k] != v {
					t.Errorf("request %s = %q, want %q", k, ss.got[0][k], v)
				}
			}
			if ss.auth != "Bearer sk-tts" {
				t.Errorf("Authorization %q, want Bearer sk-tts", ss.auth)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ss := &speechServer{status: http.StatusTooManyRequests}
	srv := httptest.NewServer(ss)
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Voice("alloy").Synthesize(context.Background(), "hello")
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("Synthesize against a 429 = %v, want an error naming it", err)
	}
	ss.mu.Lock()
	if ss.auth != "" || len(ss.got) != 1 || ss.got[0]["model"] != "tts-1" {
		t.Errorf("no key, no model: sent Authorization %q, requests %v; want none and tts-1", ss.auth, ss.got)
	}
	ss.mu.Unlock()
	if _, err := c.Voice("alloy").Synthesize(context.Background(), " "); err == nil {
		t.Error("Synthesize of blank text succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Voice("alloy").Synthesize(ctx, "hello"); err == nil {
		t.Error("Synthesize with a cancelled context succeeded")
	}
	for _, bad := range []string{"", "file:///v1", "::"} {
		if _, err := New(Config{BaseURL: bad}); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
}
