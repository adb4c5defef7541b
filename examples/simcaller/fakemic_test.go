package simcaller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

// QuestionWAV writes text, spoken by flite in the sim caller's voice after lead of
// silence, to a WAV file in the test's temporary folder, for a browser's fake microphone
// (browser.FakeMicrophone). The microphone starts when the page joins the call; lead lets
// what the line says first (an assistant's greeting) finish before the question starts.
func QuestionWAV(t testing.TB, text string, lead time.Duration) string {
	t.Helper()
	b, err := callerbot.SpokenWAV(context.Background(), persona.SimCallerVoice, text, lead, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "question.wav")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Chromium with a fake microphone playing a spoken WAV is the caller: the sim's page
// places a call, the line (here the test, in the control plane's place) answers it into a
// room, and a participant of that room hears the page's microphone say the question.
func TestBrowserFakeMicrophoneReachesTheRoom(t *testing.T) {
	browser.Setup(t)
	lk := livekittest.Start(t, livekitserver.Config{})
	cfg := lk.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}

	// The control plane's part: answer every inbound call into room ses_fakemic, where a
	// listener waits.
	start := time.Now()
	const roomName = "ses_fakemic"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := rooms.CreateRoom(ctx, rtc.RoomSpec{Name: roomName}); err != nil {
		t.Fatal(err)
	}
	partyTok, err := rooms.ParticipantToken(rtc.Grant{Room: roomName, Identity: platform.ParticipantIdentity, Kind: rtc.KindSIP})
	if err != nil {
		t.Fatal(err)
	}
	inbound := make(chan platform.Notification, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := simhook.Verify(r, "sim-secret", time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if n.Event == platform.EventInbound {
			inbound <- n
		}
	}))
	t.Cleanup(hook.Close)
	s, err := platformsim.New(platformsim.Config{NotifyURL: hook.URL + simhook.Path, Secret: "sim-secret", ClientSDK: browser.ClientSDK(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(c)
	})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	listenTok, err := rooms.ParticipantToken(rtc.Grant{Room: roomName, Identity: "listener"})
	if err != nil {
		t.Fatal(err)
	}
	listener, err := callerbot.Join(ctx, callerbot.Options{URL: rooms.PublicURL(), Token: listenTok.JWT})
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Leave()
	t.Cleanup(func() { keepHeard(t, start, "heard.wav", listener.Heard(time.Time{})) })

	question := "what time do you open tomorrow"
	sentences := []string{question, "thank you very much goodbye", "please send me the bill"}
	b := browser.Launch(t, browser.FakeMicrophone(QuestionWAV(t, question, 1500*time.Millisecond)))
	p := b.Open(srv.URL + "/sim/?to=" + url.QueryEscape("+15550100001"))
	p.Eval(`document.getElementById('media').value = 'audio'`, nil)
	p.Click("#call")
	var n platform.Notification
	select {
	case n = <-inbound:
	case <-ctx.Done():
		t.Fatal("no inbound call from the page")
	}
	if err := s.Answer(ctx, n.PlatformCallID, "call_fakemic", platform.Room{URL: rooms.PublicURL(), Token: partyTok.JWT}); err != nil {
		t.Fatal(err)
	}
	p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)

	// The page's microphone speaks once, and the listener hears the question. What it
	// recognises is all it heard from the party's first sound until the party has been
	// quiet for two seconds (longer than the WAV's lead, so a click as the microphone
	// opens does not end it before the question). Its stretches of sound (by arrival) do
	// not delimit the question: on a busy machine the page's packets arrive in bursts,
	// and a question whose audio came whole arrived as three stretches with 300 ms gaps
	// between them (the middle one, alone, was recognised as nothing).
	const quiet = 2 * time.Second
	var first, last callerbot.Sound
	deadline := time.Now().Add(30 * time.Second)
	for {
		var party []callerbot.Sound
		for _, snd := range listener.Sounds() {
			if snd.Participant == platform.ParticipantIdentity {
				party = append(party, snd)
			}
		}
		if len(party) > 0 {
			first, last = party[0], party[len(party)-1]
			if !last.Ongoing && time.Since(last.End) >= quiet {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener heard no speech from the page ending in %v of quiet; sounds %+v", quiet, listener.Sounds())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pcm := listener.Heard(first.Start.Add(-200 * time.Millisecond))
	spoke := callerbot.Sound{Start: first.Start, End: last.End}
	// Recognition has its own time: on a busy machine the call may have used up ctx.
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	got, err := sphinx.Choose(rctx, pcm, sentences)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the page's microphone spoke for %v (arrival), %v of audio heard; recognised %q", spoke.End.Sub(spoke.Start).Round(time.Millisecond),
		time.Duration(len(pcm))*time.Second/callerbot.HearRate, got)
	if got != question {
		t.Errorf("the listener recognised %q from the page's microphone, want %q; sounds heard %+v", got, question, listener.Sounds())
	}
	keepHeard(t, start, "recognised.wav", pcm)
	p.Click("#hangup")
}

// keepHeard writes audio the listener heard to a WAV file, in $TURN_AUDIO_DIR when set,
// else in the test's temporary folder, and logs where when the test failed or the
// folder was asked for: what reached the room can be listened to and recognised again.
func keepHeard(t *testing.T, runStart time.Time, name string, pcm []int16) {
	dir := os.Getenv("TURN_AUDIO_DIR")
	if dir == "" && !t.Failed() {
		return
	}
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-%d-%s", t.Name(), runStart.UnixMilli(), name))
	if err := os.WriteFile(p, tts.EncodeWAV(tts.PCM{Rate: callerbot.HearRate, Samples: pcm}), 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("the listener's audio: %s", p)
}
