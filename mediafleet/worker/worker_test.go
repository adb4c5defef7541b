package worker_test

import (
	"context"
	"image"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

const greeting = "Hello, thank you for calling Acme. How can I help you today?"

// Other sentences the recogniser may pick instead of the greeting.
var distractors = []string{
	"Good morning, welcome to the store. Please hold.",
	"Sorry, wrong number, call back later.",
	"The office is closed today. Goodbye.",
	"What time is my pizza order?",
}

func testJob(callID, media, avatarID string) persona.Job {
	return persona.Job{
		CallID: callID, SessionID: "ses_" + callID, AccountID: "acct_test", Media: media,
		CallerIdentity: "caller-" + callID, AnsweredAt: time.Now().UTC(),
		Brand: persona.Brand{Name: "Acme Plumbing", Color: "#ff6a00"},
		Version: persona.Version{
			AssistantID: "asst_1", ID: "ver_1", Number: 1, Name: "Reception",
			SystemPrompt: "You answer the phone.", Greeting: greeting, AvatarID: avatarID,
			Framing: persona.Framing{Shot: "close_up", Position: "right"},
		},
	}
}

// heardGreeting waits until the bot heard speech followed by a pause, then checks with
// the recogniser that it was the greeting.
func heardGreeting(t *testing.T, bot *callerbot.Bot) {
	t.Helper()
	eventually(t, 15*time.Second, "greeting audio", func() bool { return !bot.FirstSound().IsZero() })
	start := bot.FirstSound().Add(-200 * time.Millisecond)
	// Speech is heard; wait for the trailing silence after it.
	eventually(t, 15*time.Second, "end of greeting", func() bool {
		pcm := bot.Heard(start)
		return len(pcm) > 2*sphinx.Rate && quiet(pcm[len(pcm)-sphinx.Rate*8/10:])
	})
	got, err := sphinx.Choose(context.Background(), bot.Heard(start), append([]string{greeting}, distractors...))
	if err != nil {
		t.Fatal(err)
	}
	if want := joinWords(greeting); got != want {
		t.Errorf("recognised %q, want the greeting %q", got, want)
	}
}

func quiet(pcm []int16) bool {
	for _, v := range pcm {
		if v > 600 || v < -600 {
			return false
		}
	}
	return true
}

func joinWords(s string) string {
	ws := sphinx.Words(s)
	out := ""
	for i, w := range ws {
		if i > 0 {
			out += " "
		}
		out += w
	}
	return out
}

func TestVideoCall(t *testing.T) {
	e := newEnv(t)
	e.startWorker(nil)
	job := testJob("call_video", "video", "ava_theo")
	token := e.call("room-video", job)

	speech, err := callerbot.Speech(context.Background(), &espeak.Synthesizer{}, "Hi, I have a question about my order.")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScreens(job.Brand.Color, job.Version.AvatarID)
	bot, err := callerbot.Join(context.Background(), callerbot.Options{
		URL: lk.URL, Token: token, Audio: &speech, Video: true, OnFrame: sc.see,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()

	heardGreeting(t, bot)
	eventually(t, 5*time.Second, "avatar frames", func() bool { _, a, _ := sc.counts(); return a >= 5 })
	c, a, other := sc.counts()
	sc.mu.Lock()
	firstC, firstA, last := sc.firstConnecting, sc.firstAvatar, sc.lastAvatar
	sc.mu.Unlock()
	if c == 0 || firstC.IsZero() || !firstC.Before(firstA) {
		t.Errorf("connecting frames %d (first %v), avatar frames %d (first %v): want the connecting screen first", c, firstC, a, firstA)
	}
	if other > 2 {
		t.Errorf("%d frames were neither the connecting screen nor the avatar", other)
	}
	// Framing close_up/right: the face sits in the right third.
	theo, _ := avatar.Lookup("ava_theo")
	if x, ok := skinCentre(last, theo); !ok || x < 2*last.Rect.Dx()/3 {
		t.Errorf("face centre x = %d (found %v), want in the right third of %d", x, ok, last.Rect.Dx())
	}

	bot.Leave()
	reps := e.reportsUntilEnded(job.CallID, 20*time.Second)
	want := []string{persona.ReportConnecting, persona.ReportMediaVerified, persona.ReportGreeting, persona.ReportEnded}
	if got := kinds(reps); !slices.Equal(got, want) {
		t.Errorf("report kinds = %v, want %v", got, want)
	}
	end := reps[len(reps)-1]
	if end.EndReason != "caller_hangup" || end.SessionID != job.SessionID {
		t.Errorf("ended report reason %q session %q, want caller_hangup for %s", end.EndReason, end.SessionID, job.SessionID)
	}
	m := end.Metrics
	if m.ConnectingScreenMS == nil || m.FirstGreetingMS == nil || *m.ConnectingScreenMS > *m.FirstGreetingMS || *m.FirstGreetingMS > 5000 {
		t.Errorf("metrics connecting=%v greeting=%v, want both, connecting first, greeting within 5 s", ptr(m.ConnectingScreenMS), ptr(m.FirstGreetingMS))
	}
	if len(end.Transcript) != 1 || end.Transcript[0].Speaker != "assistant" || end.Transcript[0].Text != greeting ||
		end.Transcript[0].EndMS-end.Transcript[0].StartMS < 1500 {
		t.Errorf("transcript = %+v, want the greeting turn of a few seconds", end.Transcript)
	}
	t.Logf("answer to connecting screen %d ms, to greeting audio %d ms", ptr(m.ConnectingScreenMS), ptr(m.FirstGreetingMS))
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// skinCentre finds the horizontal centre of the avatar's skin-coloured pixels.
func skinCentre(img *image.YCbCr, a avatar.Avatar) (int, bool) {
	if img == nil {
		return 0, false
	}
	skin := ycc(a.Skin.R, a.Skin.G, a.Skin.B)
	sum, n := 0, 0
	for y := 0; y < img.Rect.Dy(); y += 2 {
		for x := 0; x < img.Rect.Dx(); x += 2 {
			c := img.YCbCrAt(x, y)
			if close3([3]uint8{c.Y, c.Cb, c.Cr}, skin) {
				sum += x
				n++
			}
		}
	}
	if n < 100 {
		return 0, false
	}
	return sum / n, true
}

func TestAudioOnlyCall(t *testing.T) {
	e := newEnv(t)
	e.startWorker(nil)
	job := testJob("call_audio", "audio", "ava_maya")
	token := e.call("room-audio", job)

	tone := callerbot.Tone(300)
	frames := 0
	bot, err := callerbot.Join(context.Background(), callerbot.Options{
		URL: lk.URL, Token: token, Audio: &tone, OnFrame: func(callerbot.Frame) { frames++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	heardGreeting(t, bot)
	for _, rp := range bot.Room().GetRemoteParticipants() {
		for _, pub := range rp.TrackPublications() {
			if pub.Kind() != "audio" {
				t.Errorf("audio-only call: %s publishes a %s track", rp.Identity(), pub.Kind())
			}
		}
	}
	bot.Leave()
	reps := e.reportsUntilEnded(job.CallID, 20*time.Second)
	want := []string{persona.ReportMediaVerified, persona.ReportGreeting, persona.ReportEnded}
	if got := kinds(reps); !slices.Equal(got, want) {
		t.Errorf("report kinds = %v, want %v", got, want)
	}
	end := reps[len(reps)-1]
	if end.EndReason != "caller_hangup" || end.Metrics.ConnectingScreenMS != nil || end.Metrics.FirstGreetingMS == nil {
		t.Errorf("ended: reason %q connecting %v greeting %v; want caller_hangup, no screen, a greeting time",
			end.EndReason, ptr(end.Metrics.ConnectingScreenMS), ptr(end.Metrics.FirstGreetingMS))
	}
	if frames != 0 {
		t.Errorf("caller decoded %d video frames on an audio call", frames)
	}
}

func TestMediaFailedWhenCallerSendsNothing(t *testing.T) {
	e := newEnv(t)
	e.startWorker(func(c *worker.Config) { c.VerifyTimeout = 2 * time.Second })
	job := testJob("call_silent", "video", "ava_iris")
	token := e.call("room-silent", job)

	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	reps := e.reportsUntilEnded(job.CallID, 15*time.Second)
	end := reps[len(reps)-1]
	if end.EndReason != "media_failed" {
		t.Errorf("end reason = %q, want media_failed", end.EndReason)
	}
	if end.Metrics.FirstGreetingMS != nil || len(end.Transcript) != 0 {
		t.Errorf("a greeting was spoken on a failed call: %+v", end)
	}
	if slices.Contains(kinds(reps), persona.ReportMediaVerified) {
		t.Errorf("reports %v include media_verified", kinds(reps))
	}
	// The worker left the room.
	left := wait(t, bot.RemoteLeft(), "the assistant leaving")
	if left == job.CallerIdentity {
		t.Errorf("participant that left = %s, want the assistant", left)
	}
}
