package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

// syncBuffer is an io.Writer the SDK's callbacks and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// run joins in the background until the test ends; its output is returned.
func run(t *testing.T, rtcURL, token string) *syncBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- join(ctx, rtcURL, token, out) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("join: %v", err)
		}
	})
	return out
}

func waitLines(t *testing.T, out *syncBuffer, lines ...string) {
	t.Helper()
	harness.WaitFor(t, 20*time.Second, strings.Join(lines, ", "), func() bool {
		got := out.String()
		for _, l := range lines {
			if !strings.Contains(got, l) {
				return false
			}
		}
		return true
	})
}

// TestJoinSnippet runs the guide's Go snippet against the real stack: the first client
// finds the platform party with its tracks; a watch-only second client finds the first
// one beside it and cannot publish; the first sees the second join under its name.
func TestJoinSnippet(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	s := harness.Start(t, harness.Options{})
	var created struct {
		ID                  string `json:"id"`
		RTCURL              string `json:"rtc_url"`
		ParticipantToken    string `json:"participant_token"`
		ParticipantIdentity string `json:"participant_identity"`
	}
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+15557654321", "media": "video"}, &created),
		http.StatusCreated, "POST /v1/sessions")
	first := run(t, created.RTCURL, created.ParticipantToken)
	waitLines(t, first,
		"me: "+created.ParticipantIdentity+" in "+created.ID+", can publish: true",
		"track: platform publishes caller-audio (audio, MICROPHONE)",
		"track: platform publishes caller-camera (video, CAMERA)")
	if out := first.String(); !strings.Contains(out, "platform (+15557654321, kind SIP)") {
		t.Errorf("first client's output:\n%s\nwant the platform party named by its handle, kind SIP", out)
	}

	var watch struct {
		ParticipantToken    string `json:"participant_token"`
		ParticipantIdentity string `json:"participant_identity"`
	}
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/sessions/"+created.ID+"/tokens", map[string]any{"name": "Supervisor", "watch_only": true}, &watch),
		http.StatusCreated, "POST tokens")
	second := run(t, created.RTCURL, watch.ParticipantToken)
	waitLines(t, second,
		"me: "+watch.ParticipantIdentity+" in "+created.ID+", can publish: false",
		"present: "+created.ParticipantIdentity+" (customer, kind STANDARD)",
		"track: platform publishes caller-audio (audio, MICROPHONE)")
	waitLines(t, first, "joined: "+watch.ParticipantIdentity+" (Supervisor, kind STANDARD)")
}

// TestJoinSnippetCaptions runs the snippet beside a web call: a caller (a Go client with
// a quiet microphone) joins, and the snippet, with a watcher's token, prints the
// assistant's greeting as it is spoken and then final, on behalf of the assistant.
func TestJoinSnippetCaptions(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	s := harness.Start(t, harness.Options{})
	s.StartWorker(t, nil, worker.Options{}) // no speech engines: it greets and holds the line
	const greeting = "Hello, thank you for calling."
	var a struct {
		ID string `json:"id"`
	}
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Front desk", "system_prompt": "Help.",
		"greeting": greeting, "avatar_id": "ava_theo"}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
	var web struct {
		ID               string `json:"id"`
		RTCURL           string `json:"rtc_url"`
		ParticipantToken string `json:"participant_token"`
	}
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"mode": "assistant", "assistant_id": a.ID, "media": "audio"}, &web),
		http.StatusCreated, "POST /v1/sessions (web call)")
	var watch struct {
		ParticipantToken string `json:"participant_token"`
	}
	harness.Must(t, s.Do(t, http.MethodPost, "/v1/sessions/"+web.ID+"/tokens", nil, &watch), http.StatusCreated, "POST tokens")
	out := run(t, web.RTCURL, watch.ParticipantToken)
	silence := callerbot.Silence()
	caller, err := callerbot.Join(context.Background(), callerbot.Options{URL: web.RTCURL, Token: web.ParticipantToken, Audio: &silence})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(caller.Leave)
	waitLines(t, out, "final=true: "+greeting)
	got := out.String()
	if !regexp.MustCompile(`caption: assistant-\S+ SG_[0-9a-f]+ final=false: ` + regexp.QuoteMeta(greeting)).MatchString(got) {
		t.Errorf("the snippet printed:\n%s\nwant the greeting's caption from the assistant, first not final", got)
	}
}

// TestGuideShowsTheSnippet: docs/joining.md's Go block is this package's join, word for
// word, so the guide shows what TestJoinSnippet runs.
func TestGuideShowsTheSnippet(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "// snippet: join (docs/joining.md shows from here to the end of the file)\n"
	i := bytes.Index(src, []byte(marker))
	if i < 0 {
		t.Fatal("main.go lost its snippet marker")
	}
	snippet := strings.TrimSpace(string(src[i+len(marker):]))
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "joining.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), snippet) {
		t.Errorf("docs/joining.md does not show examples/joinroom's join as it is:\n%s", snippet)
	}
}
