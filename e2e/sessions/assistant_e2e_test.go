package sessions_test

import (
	"context"
	"image"
	"image/color"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Greetings of the end-to-end assistant, every word in the recogniser's dictionary.
const (
	greetingV1 = "Hello, thank you for calling Acme. How can I help you today?"
	greetingV2 = "Good morning, this is the new front desk. What can I do for you?"
)

// candidates are what the recogniser chooses among: both greetings and sentences that
// are neither.
var candidates = []string{greetingV1, greetingV2,
	"Welcome to the store. Please hold.",
	"Sorry, wrong number, call back later.",
	"The office is closed today. Goodbye.",
}

// brandColor is every account's default brand colour (account.Service.Create).
const brandColor = "#3b5bdb"

// TestAssistantCallEndToEnd is issue 5 through the whole control plane on real parts:
// livekit-server, SQLite, the sim platform, the HTTP API, the sweeper and a real persona
// worker.
//
//  1. An assistant is published and assigned to a line; a sim video call on the line is
//     answered by it: the caller sees the branded connecting screen before the avatar,
//     and hears the greeting (PocketSphinx picks it among other sentences). The caller
//     hangs up through /sim/, and GET /v1/calls/{id} shows the completed record.
//  2. A new version published during a second call changes nothing for that call: it
//     hears version 1 and its record names version 1. The next call, audio only, hears
//     version 2 and names it.
//  3. POST /v1/sessions with mode assistant dials out; the dialled party hears the
//     assistant's greeting, and the customer's client watches the assistant.
func TestAssistantCallEndToEnd(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{})
	a := publishAssistant(t, st, "Front desk", greetingV1, "ava_theo")
	v1 := a.ActiveVersionID

	t.Run("video call", func(t *testing.T) {
		sc := newScreens(brandColor, "ava_theo")
		placed := ring(t, st, "video", platformsim.PartyOptions{OnFrame: sc.see})
		if got := heardGreeting(t, st, placed.ID); got != sphinxWords(greetingV1) {
			t.Errorf("the caller heard %q, want the greeting %q", got, sphinxWords(greetingV1))
		}
		harness.WaitFor(t, 10*time.Second, "avatar frames", func() bool { return sc.counts().avatars >= 5 })
		n := sc.counts()
		if n.connecting == 0 || !n.firstConnecting.Before(n.firstAvatar) {
			t.Errorf("connecting screen frames %d (first %v), avatar frames %d (first %v): want the connecting screen first",
				n.connecting, n.firstConnecting, n.avatars, n.firstAvatar)
		}
		if n.other > 2 {
			t.Errorf("%d frames were neither the connecting screen nor the avatar", n.other)
		}

		hangupSim(t, st, placed.ID)
		c := waitRecord(t, st, placed.CallID, "the completed record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
		checkRecord(t, c, a.ID, v1, greetingV1, true)
		if c.Direction != call.Inbound || str(c.EndReason) != call.ReasonRemoteHangup || str(c.EndedBy) != call.EndedByRemote {
			t.Errorf("record = %+v, want inbound, ended by the caller's hang-up", c)
		}
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, placed.CallID)
		t.Logf("answer to connecting screen %d ms, to greeting audio %d ms", *c.Metrics.ConnectingScreenMS, *c.Metrics.FirstGreetingMS)
	})

	var v2 string
	t.Run("publishing during a call changes only the next call", func(t *testing.T) {
		during := ring(t, st, "audio", platformsim.PartyOptions{})
		// The call is answered: its version is fixed. Version 2 comes out now.
		var pub assistantObj
		harness.Must(t, st.Do(t, http.MethodPatch, "/v1/assistants/"+a.ID, map[string]any{"greeting": greetingV2}, nil), http.StatusOK, "PATCH")
		harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &pub), http.StatusCreated, "publish v2")
		v2 = pub.ActiveVersionID
		if v2 == v1 {
			t.Fatal("publishing did not make a new active version")
		}
		// The next call, placed now, runs beside it.
		next := ring(t, st, "audio", platformsim.PartyOptions{})
		if got := heardGreeting(t, st, during.ID); got != sphinxWords(greetingV1) {
			t.Errorf("the call answered before version 2 heard %q, want version 1's greeting", got)
		}
		if job := dispatchedJob(t, st, record(t, st, during.CallID).sessionID(t)); job.Version.ID != v1 || job.Version.Greeting != greetingV1 {
			t.Errorf("the running call's job has version %s (%q), want %s", job.Version.ID, job.Version.Greeting, v1)
		}
		if got := heardGreeting(t, st, next.ID); got != sphinxWords(greetingV2) {
			t.Errorf("the next call heard %q, want version 2's greeting", got)
		}
		// Audio only: nobody publishes video, and no connecting screen was drawn.
		for _, p := range st.Sim.Bot(next.ID).Room().GetRemoteParticipants() {
			for _, pub := range p.TrackPublications() {
				if pub.Kind() == lksdk.TrackKindVideo {
					t.Errorf("audio call: %s publishes video", p.Identity())
				}
			}
		}
		hangupSim(t, st, during.ID)
		hangupSim(t, st, next.ID)
		c := waitRecord(t, st, during.CallID, "the first record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
		checkRecord(t, c, a.ID, v1, greetingV1, false)
		c = waitRecord(t, st, next.CallID, "the next record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
		checkRecord(t, c, a.ID, v2, greetingV2, false)
		if c.Metrics.ConnectingScreenMS != nil {
			t.Errorf("audio call has a connecting screen time: %+v", c.Metrics)
		}
	})

	t.Run("outbound session in assistant mode", func(t *testing.T) {
		if v2 == "" {
			t.Skip("needs version 2")
		}
		s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "mode": "assistant",
			"assistant_id": a.ID, "media": "video"})
		if s.Mode != session.ModeAssistant || str(s.AssistantID) != a.ID || str(s.VersionID) != v2 {
			t.Errorf("created = %+v, want mode assistant with version 2", s)
		}
		cl := joinClient(t, s.RTCURL, s.ParticipantToken) // the customer's client watches
		var party platformsim.Call
		harness.WaitFor(t, 20*time.Second, "the dialled party in the room", func() bool {
			var ok bool
			party, ok = st.Sim.ByCallID(s.CallID)
			return ok && party.InRoom
		})
		if got := heardGreeting(t, st, party.ID); got != sphinxWords(greetingV2) {
			t.Errorf("the dialled party heard %q, want version 2's greeting", got)
		}
		harness.WaitFor(t, 10*time.Second, "the client sees the assistant", func() bool { return cl.videoFramesFrom("assistant-") > 0 })
		if job := dispatchedJob(t, st, s.ID); job.CallID != s.CallID || job.Version.ID != v2 || job.Media != "video" {
			t.Errorf("dispatched job = %+v, want call %s with version 2", job, s.CallID)
		}

		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil), http.StatusOK, "DELETE")
		c := waitRecord(t, st, s.CallID, "the completed record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
		checkRecord(t, c, a.ID, v2, greetingV2, true)
		if c.Direction != call.Outbound || str(c.EndReason) != call.ReasonDeleted || str(c.EndedBy) != call.EndedByCustomer {
			t.Errorf("record = %+v, want outbound, deleted by the customer", c)
		}
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
	})
}

func (c recordObj) sessionID(t *testing.T) string {
	t.Helper()
	if c.SessionID == nil {
		t.Fatalf("call %s has no session", c.ID)
	}
	return *c.SessionID
}

// checkRecord checks a completed assistant call record: the assistant and version, the
// timestamps and duration, the worker's metrics and the greeting turn.
func checkRecord(t *testing.T, c recordObj, assistantID, versionID, greeting string, video bool) {
	t.Helper()
	if c.Status != call.StatusEnded || c.HandledBy != call.HandledByAssistant || str(c.AssistantID) != assistantID || str(c.VersionID) != versionID {
		t.Errorf("record = %+v, want ended, handled by assistant %s version %s", c, assistantID, versionID)
	}
	started, _ := time.Parse(time.RFC3339Nano, c.StartedAt)
	answered, _ := time.Parse(time.RFC3339Nano, str(c.AnsweredAt))
	ended, _ := time.Parse(time.RFC3339Nano, str(c.EndedAt))
	if started.IsZero() || answered.Before(started) || !ended.After(answered) || c.DurationMS == nil ||
		*c.DurationMS != ended.Sub(answered).Milliseconds() {
		t.Errorf("started %s, answered %s, ended %s, duration %v ms: want in order, duration from answer to end",
			c.StartedAt, str(c.AnsweredAt), str(c.EndedAt), c.DurationMS)
	}
	m := c.Metrics
	if m == nil || m.FirstGreetingMS == nil || *m.FirstGreetingMS <= 0 || (video && (m.ConnectingScreenMS == nil || *m.ConnectingScreenMS > *m.FirstGreetingMS)) {
		t.Errorf("metrics = %+v, want the greeting time (and on video the connecting screen before it)", m)
	}
	if len(c.Turns) == 0 || c.Turns[0].Speaker != "assistant" || c.Turns[0].Text != greeting || c.Turns[0].EndMS <= c.Turns[0].StartMS {
		t.Errorf("transcript = %+v, want the greeting turn first", c.Turns)
	}
}

// heardGreeting waits until the sim call's party heard speech followed by a pause and
// returns the sentence of candidates the recogniser picks ("" for none).
func heardGreeting(t *testing.T, st *harness.Stack, simCallID string) string {
	t.Helper()
	return heardAmong(t, st, simCallID, candidates)
}

// heardAmong is heardGreeting choosing among sentences.
func heardAmong(t *testing.T, st *harness.Stack, simCallID string, sentences []string) string {
	t.Helper()
	bot := st.Sim.Bot(simCallID)
	if bot == nil {
		t.Fatalf("sim call %s has no party in the room", simCallID)
	}
	harness.WaitFor(t, 20*time.Second, "greeting audio", func() bool { return !bot.FirstSound().IsZero() })
	start := bot.FirstSound().Add(-200 * time.Millisecond)
	harness.WaitFor(t, 20*time.Second, "the end of the greeting", func() bool {
		pcm := bot.Heard(start)
		return len(pcm) > 2*sphinx.Rate && quiet(pcm[len(pcm)-sphinx.Rate*8/10:])
	})
	got, err := sphinx.Choose(context.Background(), bot.Heard(start), sentences)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func quiet(pcm []int16) bool {
	for _, v := range pcm {
		if v > 600 || v < -600 {
			return false
		}
	}
	return true
}

func sphinxWords(s string) string { return strings.Join(sphinx.Words(s), " ") }

// screens classifies the frames a caller decodes by their top corners' colour: the
// brand colour is the connecting screen, the avatar's backdrop the avatar.
type screens struct {
	brand, backdrop [3]uint8
	mu              sync.Mutex
	n               screenCounts
}

type screenCounts struct {
	connecting, avatars, other   int
	firstConnecting, firstAvatar time.Time
}

func newScreens(brandHex, avatarID string) *screens {
	b, _ := avatar.ParseColor(brandHex)
	a, _ := avatar.Lookup(avatarID)
	return &screens{brand: ycc(b), backdrop: ycc(a.Backdrop)}
}

func (s *screens) see(f callerbot.Frame) {
	c := corners(f.Image)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case near(c, s.brand):
		s.n.connecting++
		if s.n.firstConnecting.IsZero() {
			s.n.firstConnecting = f.At
		}
	case near(c, s.backdrop):
		s.n.avatars++
		if s.n.firstAvatar.IsZero() {
			s.n.firstAvatar = f.At
		}
	default:
		s.n.other++
	}
}

func (s *screens) counts() screenCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func ycc(c color.RGBA) [3]uint8 {
	y, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
	return [3]uint8{y, cb, cr}
}

// corners averages the two top 8x8 corner blocks.
func corners(img *image.YCbCr) [3]uint8 {
	w := img.Rect.Dx()
	var sum [3]int
	n := 0
	for _, o := range [][2]int{{2, 2}, {w - 10, 2}} {
		for y := o[1]; y < o[1]+8; y++ {
			for x := o[0]; x < o[0]+8; x++ {
				c := img.YCbCrAt(x, y)
				sum[0] += int(c.Y)
				sum[1] += int(c.Cb)
				sum[2] += int(c.Cr)
				n++
			}
		}
	}
	return [3]uint8{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n)}
}

func near(a, b [3]uint8) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > 12 || d < -12 {
			return false
		}
	}
	return true
}
