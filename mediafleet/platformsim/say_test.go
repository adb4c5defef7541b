package platformsim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// dialed dials a handle into a fresh room and returns the sim call once its party is in
// the room, with a token for another participant of that room.
func (e env) dialed(t *testing.T, roomName string) (string, string) {
	t.Helper()
	room, clientToken := e.room(t, roomName)
	id, err := e.sim.Dial(context.Background(), platform.DialRequest{CallID: "call_" + roomName, From: "+15550100001",
		To: "+15557654321", Media: platform.MediaAudio, Room: room})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.recv.wait(t, id, 1)[0]; n.Event != platform.EventAnswered {
		t.Fatalf("notification = %+v, want answered", n)
	}
	return id, clientToken
}

// heardBetween is what bot heard from the start of u to 300 ms past its end.
func heardBetween(bot *callerbot.Bot, u callerbot.Utterance) []int16 {
	pcm := bot.Heard(u.Start)
	if n := int((u.End.Sub(u.Start) + 300*time.Millisecond).Seconds() * callerbot.HearRate); len(pcm) > n {
		pcm = pcm[:n]
	}
	return pcm
}

var stampRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// The sim party says two things in a row over the API: both are queued, go out one after
// the other for as long as their audio lasts, are listed with their times, and another
// participant recognises each; after speaking the party is silent. Then that participant
// speaks and the party hears it: the onset and end it records are those of the speech.
func TestSayAndHear(t *testing.T) {
	e := setup(t)
	id, clientToken := e.dialed(t, "ses_say")
	silence := callerbot.Silence()
	client, err := callerbot.Join(context.Background(), callerbot.Options{URL: e.rooms.PublicURL(), Token: clientToken, Audio: &silence})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Leave()
	waitFor(t, "the client to hear the party's tone", func() bool { return !client.FirstSound().IsZero() })

	for _, c := range []struct {
		name, id, body string
		status         int
		code           string
	}{
		{"empty", id, `{"text":"  "}`, 400, "parameter_missing"},
		{"no text", id, `{}`, 400, "parameter_missing"},
		{"too long", id, `{"text":"` + strings.Repeat("a", platformsim.MaxSayRunes+1) + `"}`, 400, "parameter_invalid"},
		{"unknown field", id, `{"text":"hi","voice":"slt"}`, 400, "invalid_json"},
		{"unknown call", "simcall_nope", `{"text":"hi"}`, 404, "resource_not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, b := call(t, "POST", e.http.URL+"/sim/calls/"+c.id+"/say", c.body)
			if status != c.status || !strings.Contains(string(b), `"`+c.code+`"`) {
				t.Errorf("say = %d %s, want %d %s", status, b, c.status, c.code)
			}
		})
	}

	sentences := []string{"what time do you open tomorrow", "thank you very much goodbye", "please send me the bill", "good morning"}
	var queued []platformsim.Utterance
	for i, text := range sentences[:2] {
		status, b := call(t, "POST", e.http.URL+"/sim/calls/"+id+"/say", `{"text":"`+text+`"}`)
		var u platformsim.Utterance
		if err := json.Unmarshal(b, &u); err != nil || status != http.StatusAccepted {
			t.Fatalf("say %q = %d %s, want 202", text, status, b)
		}
		if u.Index != i || u.Text != text || u.Object != "sim_utterance" || u.DurationMS < 500 || u.QueuedAt.IsZero() {
			t.Errorf("say %q = %+v, want index %d", text, u, i)
		}
		queued = append(queued, u)
	}
	if queued[1].Status != platformsim.UtteranceQueued {
		t.Errorf("second utterance is %s right after the first, want queued", queued[1].Status)
	}

	bot := e.sim.Bot(id)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := bot.WaitSaid(ctx, 1); err != nil {
		t.Fatal(err)
	}
	said := bot.Said()
	for i, u := range said {
		took := u.End.Sub(u.Start)
		// Frames are whole: the audio goes out in at most one frame more than it lasts,
		// plus what a late wake-up of this busy machine adds; a little less when the first
		// frame woke later than the last (frames are due on a schedule from the first).
		if took < u.Duration-5*time.Millisecond || took > u.Duration+callerbot.FrameDuration+60*time.Millisecond {
			t.Errorf("utterance %d went out in %v, its audio lasts %v", i, took, u.Duration)
		}
		if !u.Queued.Before(u.Start) {
			t.Errorf("utterance %d started %v before it was queued", i, u.Queued.Sub(u.Start))
		}
	}
	// The end is the last frame's send time plus a frame; the next frame is due on the
	// schedule, so it may go out a little before that when the last one was late.
	if gap := said[1].Start.Sub(said[0].End); gap < -10*time.Millisecond || gap > 40*time.Millisecond {
		t.Errorf("second utterance started %v after the first ended, want right after", gap)
	}

	// The listing shows the same moments, to the millisecond, and offsets from the answer.
	got := simCall(t, "GET", e.http.URL+"/sim/calls/"+id, "", 200)
	status, raw := call(t, "GET", e.http.URL+"/sim/calls/"+id, "")
	var loose struct {
		Said []map[string]any `json:"said"`
	}
	if err := json.Unmarshal(raw, &loose); err != nil || status != 200 || len(loose.Said) != 2 {
		t.Fatalf("GET = %d %s", status, raw)
	}
	for _, k := range []string{"queued_at", "started_at", "ended_at"} {
		if s, _ := loose.Said[0][k].(string); !stampRe.MatchString(s) {
			t.Errorf("said[0].%s = %q, want RFC 3339 UTC with milliseconds", k, s)
		}
	}
	answered := *got.AnsweredAt
	for i, u := range got.Said {
		in := said[i]
		if u.Status != platformsim.UtteranceSpoken || !u.StartedAt.Equal(in.Start.Truncate(time.Millisecond)) ||
			!u.EndedAt.Equal(in.End.Truncate(time.Millisecond)) {
			t.Errorf("listed %+v, in process %+v", u, in)
		}
		if u.StartMS == nil || u.EndMS == nil || *u.StartMS != in.Start.Sub(answered).Milliseconds() ||
			*u.EndMS-*u.StartMS < u.DurationMS-1 {
			t.Errorf("listed offsets %v-%v, want from the answer at %v", u.StartMS, u.EndMS, answered)
		}
	}

	// The other participant hears each, in the sim caller's voice.
	for i, u := range said {
		heard, err := sphinx.Choose(ctx, heardBetween(client, u), sentences)
		if err != nil {
			t.Fatal(err)
		}
		if heard != sentences[i] {
			t.Errorf("client recognised %q during utterance %d, want %q", heard, i, sentences[i])
		}
	}
	// Having spoken, the party is silent: the client hears no sound starting later.
	time.Sleep(500 * time.Millisecond)
	for _, s := range client.Sounds() {
		if s.Start.After(said[1].End.Add(100 * time.Millisecond)) {
			t.Errorf("client heard a sound at +%v after the party's last words", s.Start.Sub(said[1].End))
		}
	}
	var last callerbot.Sound
	for _, s := range client.Sounds() {
		last = s
	}
	if lag := last.End.Sub(said[1].End); lag < -100*time.Millisecond || lag > 300*time.Millisecond {
		t.Errorf("the client's last sound ended %v after the party's last words ended", lag)
	}

	// The client speaks; the party hears when it starts and stops.
	pcm, err := callerbot.Flite(ctx, "slt", sentences[3])
	if err != nil {
		t.Fatal(err)
	}
	i, err := client.Say(sentences[3], pcm)
	if err != nil {
		t.Fatal(err)
	}
	spoken, err := client.WaitSaid(ctx, i)
	if err != nil {
		t.Fatal(err)
	}
	var heard platformsim.Sound
	waitFor(t, "the party to hear the client stop", func() bool {
		for _, s := range simCall(t, "GET", e.http.URL+"/sim/calls/"+id, "", 200).Sounds {
			if s.Participant == "customer" && !s.Ongoing {
				heard = s
				return true
			}
		}
		return false
	})
	onset, end := heard.StartedAt.Sub(spoken.Start), heard.EndedAt.Sub(spoken.End)
	t.Logf("client speech %v long; heard by the party: onset +%v, end %+v", spoken.Duration, onset, end)
	// The listed moments are to the millisecond.
	if onset < -time.Millisecond || onset > 200*time.Millisecond || end < -60*time.Millisecond || end > 200*time.Millisecond {
		t.Errorf("the party heard the client's speech from +%v to %+v of it, want within a few frames", onset, end)
	}
	after, ok := bot.SoundAfter("customer", spoken.Start.Add(-50*time.Millisecond))
	during, ok2 := bot.SoundAt("customer", spoken.Start.Add(spoken.Duration/2))
	if !ok || !ok2 || !after.Start.Equal(during.Start) || !after.Start.Truncate(time.Millisecond).Equal(heard.StartedAt.Time) {
		t.Errorf("SoundAfter = %+v %v, SoundAt = %+v %v; want the stretch listed, %+v", after, ok, during, ok2, heard)
	}
	if _, ok := bot.SoundAfter("customer", spoken.End.Add(time.Second)); ok {
		t.Error("SoundAfter found a sound after the client's speech")
	}
	if heard.StartMS == nil || abs(*heard.StartMS-heard.StartedAt.Sub(*got.AnsweredAt).Milliseconds()) > 1 {
		t.Errorf("heard start_ms = %v", heard.StartMS)
	}

	// Over, the call keeps its conversation, and says no more.
	e.sim.Hangup(context.Background(), id)
	status, b := call(t, "POST", e.http.URL+"/sim/calls/"+id+"/say", `{"text":"hello"}`)
	if status != http.StatusConflict || !strings.Contains(string(b), "party_not_in_room") {
		t.Errorf("say after the end = %d %s, want 409 party_not_in_room", status, b)
	}
	if ended := simCall(t, "GET", e.http.URL+"/sim/calls/"+id, "", 200); len(ended.Said) != 2 || len(ended.Sounds) == 0 || ended.Sounds[len(ended.Sounds)-1].Ongoing {
		t.Errorf("ended call lists said %d, heard %+v", len(ended.Said), ended.Sounds)
	}
}

// With an assistant (an agent participant) in the room, the sim party sends silence, not
// its tone, but still sends audio; told to speak, it is heard.
func TestPartyQuietForAgents(t *testing.T) {
	e := setup(t)
	id, _ := e.dialed(t, "ses_quiet")
	tok, err := e.rooms.ParticipantToken(rtc.Grant{Room: "ses_quiet", Identity: "assistant-job", Kind: rtc.KindAgent})
	if err != nil {
		t.Fatal(err)
	}
	// It publishes, as an assistant does: livekit-server announces participants that
	// only listen late.
	silence := callerbot.Silence()
	agent, err := callerbot.Join(context.Background(), callerbot.Options{URL: e.rooms.PublicURL(), Token: tok.JWT, Audio: &silence})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Leave()
	joined := time.Now()
	waitFor(t, "the agent to receive the party's audio", func() bool { return len(agent.Heard(time.Time{})) >= 50*callerbot.HearRate/1000*20 })
	// The party hears of the agent about when the agent starts receiving its audio: a
	// little tone may get through (more on a loaded machine), then none.
	waitFor(t, "the party's tone to stop reaching the agent", func() bool {
		for _, s := range agent.Sounds() {
			if s.Ongoing {
				return false
			}
		}
		return true
	})
	quietFrom := time.Now()
	var toneFor time.Duration
	for _, s := range agent.Sounds() {
		toneFor = s.End.Sub(joined)
	}
	t.Logf("the agent heard the tone until %v after joining", toneFor)
	time.Sleep(600 * time.Millisecond)
	for _, s := range agent.Sounds() {
		if s.Start.After(quietFrom) {
			t.Errorf("the agent heard %+v after the party went quiet", s)
		}
	}
	u, err := e.sim.Say(context.Background(), id, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if u.Text != "hello" || u.Index != 0 {
		t.Errorf("Say = %+v", u)
	}
	waitFor(t, "the agent to hear the party speak", func() bool { return len(agent.Sounds()) > 0 })
	if got := agent.Sounds()[0].Participant; got != platform.ParticipantIdentity {
		t.Errorf("heard %q, want the party", got)
	}
}

// The sim party speaks in its own voice.
func TestSimCallerVoice(t *testing.T) {
	if _, err := callerbot.Flite(context.Background(), persona.SimCallerVoice, "hello"); err != nil {
		t.Fatalf("flite with the sim caller's voice %q: %v", persona.SimCallerVoice, err)
	}
	for avatar, voice := range persona.AvatarVoices {
		if v, _ := persona.LocalVoice(voice); v.EngineVoice == persona.SimCallerVoice {
			t.Errorf("avatar %s speaks with the sim caller's voice", avatar)
		}
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
