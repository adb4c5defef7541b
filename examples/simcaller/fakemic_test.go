package simcaller

import (
	"context"
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
	t.Setenv(platformsim.ClientSDKEnv, browser.ClientSDK(t))
	lk := livekittest.Start(t, livekitserver.Config{})
	cfg := lk.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}

	// The control plane's part: answer every inbound call into room ses_fakemic, where a
	// listener waits.
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
	s, err := platformsim.New(platformsim.Config{NotifyURL: hook.URL + simhook.Path, Secret: "sim-secret"})
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

	// The page's microphone speaks once: the listener hears one stretch of sound from the
	// party, and it is the question.
	var spoke callerbot.Sound
	deadline := time.Now().Add(30 * time.Second)
	for spoke.Start.IsZero() {
		for _, snd := range listener.Sounds() {
			if snd.Participant == platform.ParticipantIdentity && !snd.Ongoing && snd.End.Sub(snd.Start) > 500*time.Millisecond {
				spoke = snd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener heard no speech from the page; sounds %+v", listener.Sounds())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pcm := listener.Heard(spoke.Start.Add(-200 * time.Millisecond))
	if n := int((spoke.End.Sub(spoke.Start) + 500*time.Millisecond).Seconds() * callerbot.HearRate); len(pcm) > n {
		pcm = pcm[:n]
	}
	got, err := sphinx.Choose(ctx, pcm, sentences)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the page's microphone spoke for %v; recognised %q", spoke.End.Sub(spoke.Start).Round(time.Millisecond), got)
	if got != question {
		t.Errorf("the listener recognised %q from the page's microphone, want %q", got, question)
	}
	p.Click("#hangup")
}
