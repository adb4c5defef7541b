package sessions_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"

	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
)

const (
	amdGreeting = "Hello, this is the dental office."
	amdMessage  = "Please call the dental office back tomorrow morning."
	amdBox      = "Hi, you have reached Ann. I can not take your call right now. Please leave a message after the tone."
	amdScreen   = "Please say your name and why you are calling."
)

// amdRecord is the call record with its answering-machine detection.
type amdRecord struct {
	Status     string         `json:"status"`
	EndReason  *string        `json:"end_reason"`
	Transcript []persona.Turn `json:"transcript"`
	AMD        *struct {
		Result      string `json:"result"`
		DecidedAt   string `json:"decided_at"`
		DecisionMS  int64  `json:"decision_ms"`
		MessageLeft bool   `json:"message_left"`
	} `json:"amd"`
}

// amdCall places an outbound assistant session with answering-machine detection and the
// voicemail message on the sim, and returns it with its party once the party is in the
// room.
func amdCall(t *testing.T, st *harness.Stack, asstID string) (created, *callerbot.Bot) {
	t.Helper()
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654399", "mode": "assistant", "assistant_id": asstID,
		"media": "audio", "amd": map[string]any{"voicemail_message": amdMessage}})
	var party platformsim.Call
	harness.WaitFor(t, 20*time.Second, "the dialled party in the room", func() bool {
		var ok bool
		party, ok = st.Sim.ByCallID(s.CallID)
		return ok && party.InRoom
	})
	bot := st.Sim.Bot(party.ID)
	if bot == nil {
		t.Fatalf("sim call %s has no party in the room", party.ID)
	}
	return s, bot
}

// TestAMDOnSim is answering-machine detection on the real stack (SQLite, livekit-server,
// the sim, a persona worker with the real speech engines: Silero VAD tells the callee's
// speech, pocketsphinx its words) with the sim's party as the callee:
//   - a voicemail box (a recorded greeting in flite's voice, then a 1 kHz beep) is
//     decided voicemail, hears nothing of the assistant before its beep has ended, and
//     records the voicemail message after it (pocketsphinx hears the message, not the
//     greeting); the call ends assistant_hangup with amd voicemail and message_left;
//   - a person ("Hello?" and a pause) is decided human and hears the greeting;
//   - a call-screening assistant ("Please say your name and why you are calling.") is
//     decided screening by the recogniser's words, and hears the greeting once its
//     prompt is over;
//   - a callee who says nothing (the sim's party, whose test tone stops as the
//     assistant joins) is decided silence and hears the greeting.
func TestAMDOnSim(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices()})
	a := publishAssistant(t, st, "Reminder desk", amdGreeting, "ava_maya")

	t.Run("voicemail box", func(t *testing.T) {
		s, bot := amdCall(t, st, a.ID)
		u := playBox(t, bot)
		waitEnded(t, st, s.CallID)
		var r amdRecord
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+s.CallID, nil, &r), http.StatusOK, "GET call")
		if r.AMD == nil || r.AMD.Result != persona.AnsweredVoicemail || !r.AMD.MessageLeft || r.AMD.DecisionMS <= 0 ||
			str(r.EndReason) != call.ReasonAssistantHangup {
			t.Fatalf("record: amd %+v, end_reason %q; want voicemail with the message left, assistant_hangup", r.AMD, str(r.EndReason))
		}
		if len(r.Transcript) != 1 || r.Transcript[0].Speaker != persona.SpeakerAssistant || r.Transcript[0].Text != amdMessage {
			t.Errorf("transcript %+v; want the voicemail message alone (no greeting)", r.Transcript)
		}
		// Nothing of the assistant before the beep ended; the message after it.
		for _, snd := range bot.Sounds() {
			if snd.Start.Before(u.End) {
				t.Errorf("the box heard the assistant at %v, before its beep ended at %v", snd.Start, u.End)
			}
		}
		got, err := sphinx.Choose(context.Background(), bot.Heard(u.End), []string{amdMessage, amdGreeting})
		if err != nil {
			t.Fatal(err)
		}
		if got != sphinxWords(amdMessage) {
			t.Errorf("the box recorded %q after its beep; want the voicemail message", got)
		}
		t.Logf("decided after %d ms; the message began %v after the beep ended", r.AMD.DecisionMS, firstSoundAfter(bot, u.End))
	})

	t.Run("person", func(t *testing.T) {
		s, bot := amdCall(t, st, a.ID)
		waitAssistant(t, bot)
		hello, err := callerbot.Flite(context.Background(), persona.SimCallerVoice, "Hello?")
		if err != nil {
			t.Fatal(err)
		}
		i, err := bot.Say("Hello?", hello)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		u, err := bot.WaitSaid(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		var r amdRecord
		harness.WaitFor(t, 20*time.Second, "the decision", func() bool {
			st.Do(t, http.MethodGet, "/v1/calls/"+s.CallID, nil, &r)
			return r.AMD != nil
		})
		if r.AMD.Result != persona.AnsweredHuman {
			t.Fatalf("amd %+v; want human", r.AMD)
		}
		got, err := sphinx.Choose(context.Background(), waitHeard(t, bot, u.End), []string{amdMessage, amdGreeting})
		if err != nil {
			t.Fatal(err)
		}
		if got != sphinxWords(amdGreeting) {
			t.Errorf("the person heard %q; want the greeting", got)
		}
		t.Logf("decided after %d ms; the greeting began %v after the person's hello ended", r.AMD.DecisionMS, firstSoundAfter(bot, u.End))
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil), http.StatusOK, "DELETE")
	})

	t.Run("screening", func(t *testing.T) {
		s, bot := amdCall(t, st, a.ID)
		waitAssistant(t, bot)
		prompt, err := callerbot.Flite(context.Background(), persona.SimCallerVoice, amdScreen)
		if err != nil {
			t.Fatal(err)
		}
		i, err := bot.Say("screening prompt", prompt)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		u, err := bot.WaitSaid(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		var r amdRecord
		harness.WaitFor(t, 20*time.Second, "the decision", func() bool {
			st.Do(t, http.MethodGet, "/v1/calls/"+s.CallID, nil, &r)
			return r.AMD != nil
		})
		if r.AMD.Result != persona.AnsweredScreening {
			t.Fatalf("amd %+v; want screening (by the recogniser's words)", r.AMD)
		}
		for _, snd := range bot.Sounds() {
			if snd.Start.Before(u.End) {
				t.Errorf("the screen heard the assistant at %v, before its prompt ended at %v", snd.Start, u.End)
			}
		}
		got, err := sphinx.Choose(context.Background(), waitHeard(t, bot, u.End), []string{amdMessage, amdGreeting})
		if err != nil {
			t.Fatal(err)
		}
		if got != sphinxWords(amdGreeting) {
			t.Errorf("the screen heard %q after its prompt; want the greeting", got)
		}
		t.Logf("decided after %d ms", r.AMD.DecisionMS)
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil), http.StatusOK, "DELETE")
	})

	t.Run("silence", func(t *testing.T) {
		s, bot := amdCall(t, st, a.ID)
		var r amdRecord
		harness.WaitFor(t, 20*time.Second, "the decision", func() bool {
			st.Do(t, http.MethodGet, "/v1/calls/"+s.CallID, nil, &r)
			return r.AMD != nil
		})
		if r.AMD.Result != persona.AnsweredSilence {
			t.Fatalf("amd %+v; want silence", r.AMD)
		}
		decided, err := time.Parse(time.RFC3339Nano, r.AMD.DecidedAt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sphinx.Choose(context.Background(), waitHeard(t, bot, decided.Add(-time.Second)), []string{amdMessage, amdGreeting})
		if err != nil {
			t.Fatal(err)
		}
		if got != sphinxWords(amdGreeting) {
			t.Errorf("the silent callee heard %q; want the greeting", got)
		}
		t.Logf("decided after %d ms", r.AMD.DecisionMS)
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil), http.StatusOK, "DELETE")
	})
}

// playBox makes the party a voicemail box: its greeting in flite's voice, then a 1 kHz
// beep; it returns the utterance once it has gone out (End: the beep's end).
func playBox(t *testing.T, bot *callerbot.Bot) callerbot.Utterance {
	t.Helper()
	return waitSaid(t, bot, startBox(t, bot))
}

// startBox queues the voicemail box's greeting and beep, and returns its index.
func startBox(t *testing.T, bot *callerbot.Bot) int {
	t.Helper()
	box, err := callerbot.Flite(context.Background(), persona.SimCallerVoice, amdBox)
	if err != nil {
		t.Fatal(err)
	}
	pcm := append(box.Samples, make([]int16, box.Rate*4/10)...)
	for i := range box.Rate / 2 { // the beep: 1 kHz for 500 ms
		pcm = append(pcm, int16(8000*math.Sin(2*math.Pi*1000*float64(i)/float64(box.Rate))))
	}
	i, err := bot.Say("voicemail greeting", tts.PCM{Rate: box.Rate, Samples: pcm})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// waitSaid waits until the bot's i-th utterance has gone out.
func waitSaid(t *testing.T, bot *callerbot.Bot, i int) callerbot.Utterance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := bot.WaitSaid(ctx, i)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestAMDCampaignVoicemail: a campaign (amd on by default, with a voicemail message)
// calls a voicemail box and a person on the sim: the box's recipient ends voicemail
// (its attempt's outcome voicemail, the message left after the beep), the person's
// answered; the counts, GET and campaign.completed, say so, and the box's call.ended
// carries the decision.
func TestAMDCampaignVoicemail(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices()})
	a := publishAssistant(t, st, "Reminder desk", amdGreeting, "ava_maya")
	const boxHandle, personHandle = "+15557654401", "+15557654402"
	var c campaignObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns", map[string]any{
		"name": "Reminders", "assistant_id": a.ID, "line_id": st.Lines[st.Handles[0]].ID,
		"recipients": []map[string]any{{"platform_handle": boxHandle}, {"platform_handle": personHandle}},
		"settings": map[string]any{"max_concurrent_calls": 2, "calls_per_second": 5, "retry": map[string]any{"max_attempts": 1},
			"amd": map[string]any{"voicemail_message": amdMessage}},
	}, &c), http.StatusCreated, "POST /v1/campaigns")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/start", nil, &c), http.StatusOK, "start")

	// Each party plays its part as soon as it is in the room.
	played := map[string]bool{}
	var boxBot, personBot *callerbot.Bot
	var boxSay int
	var personID string
	harness.WaitFor(t, 60*time.Second, "both parties in the room", func() bool {
		for _, sc := range st.Sim.List() {
			if played[sc.To] || !sc.InRoom || (sc.To != boxHandle && sc.To != personHandle) {
				continue
			}
			bot := st.Sim.Bot(sc.ID)
			if bot == nil {
				continue
			}
			played[sc.To] = true
			if sc.To == boxHandle {
				boxBot, boxSay = bot, startBox(t, bot)
				continue
			}
			waitAssistant(t, bot)
			hello, err := callerbot.Flite(context.Background(), persona.SimCallerVoice, "Hello?")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bot.Say("Hello?", hello); err != nil {
				t.Fatal(err)
			}
			personBot, personID = bot, sc.ID
		}
		return len(played) == 2
	})
	boxSaid := waitSaid(t, boxBot, boxSay)
	// The person hangs up once the greeting has played.
	harness.WaitFor(t, 30*time.Second, "the person heard the greeting", func() bool {
		s, ok := personBot.SoundAfter("", time.Time{})
		return ok && !s.Ongoing && time.Since(s.End) > 800*time.Millisecond
	})
	hangupSim(t, st, personID)
	harness.WaitFor(t, 90*time.Second, "the campaign completed", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET campaign")
		return c.Status == "completed"
	})
	if c.Counts["voicemail"] != 1 || c.Counts["answered"] != 1 {
		t.Errorf("counts %v; want voicemail 1, answered 1", c.Counts)
	}
	var page struct {
		Data []recipientObj `json:"data"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID+"/recipients", nil, &page), http.StatusOK, "GET recipients")
	for _, r := range page.Data {
		want := map[string]string{boxHandle: "voicemail", personHandle: "answered"}[r.PlatformHandle]
		if r.Status != want || len(r.Attempts) != 1 || r.Attempts[0].Outcome == nil || *r.Attempts[0].Outcome != want {
			t.Errorf("recipient %s: %+v; want %s", r.PlatformHandle, r, want)
			continue
		}
		if r.PlatformHandle != boxHandle {
			continue
		}
		callID := *r.Attempts[0].CallID
		harness.WaitFor(t, 15*time.Second, "call.ended of the box", func() bool { return endedEventFor(t, st, callID) != nil })
		var d callevent.CallEnded
		if err := json.Unmarshal(endedEventFor(t, st, callID).Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.AMD == nil || d.AMD.Result != persona.AnsweredVoicemail || d.CampaignID != c.ID {
			t.Errorf("call.ended of the box: amd %+v campaign %q; want voicemail, %s", d.AMD, d.CampaignID, c.ID)
		}
	}
	got, err := sphinx.Choose(context.Background(), boxBot.Heard(boxSaid.End), []string{amdMessage, amdGreeting})
	if err != nil {
		t.Fatal(err)
	}
	if got != sphinxWords(amdMessage) {
		t.Errorf("the box recorded %q after its beep; want the voicemail message", got)
	}
	evs, err := st.Store.ListEvents(context.Background(), st.AccountID, callevent.TypeCampaignCompleted, listing.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		var d callevent.CampaignCompleted
		if json.Unmarshal(e.Data, &d) == nil && d.CampaignID == c.ID && (d.Counts["voicemail"] != 1 || d.Counts["answered"] != 1) {
			t.Errorf("campaign.completed counts %v; want voicemail 1, answered 1", d.Counts)
		}
	}
}

// waitAssistant waits until the assistant is in the party's room with its track
// published, and a moment more for it to hear the party: what a callee says before the
// worker joined is not heard (docs/campaigns.md), and a loaded machine (-race) joins late.
func waitAssistant(t *testing.T, bot *callerbot.Bot) {
	t.Helper()
	harness.WaitFor(t, 20*time.Second, "the assistant in the room", func() bool {
		for _, p := range bot.Room().GetRemoteParticipants() {
			if p.Kind() == lksdk.ParticipantAgent && len(p.TrackPublications()) > 0 {
				return true
			}
		}
		return false
	})
	time.Sleep(500 * time.Millisecond)
}

// waitHeard waits for a sound after since followed by 800 ms of quiet, and returns the
// audio heard from since.
func waitHeard(t *testing.T, bot *callerbot.Bot, since time.Time) []int16 {
	t.Helper()
	harness.WaitFor(t, 20*time.Second, "the assistant's speech", func() bool {
		pcm := bot.Heard(since)
		_, ok := bot.SoundAfter("", since)
		return ok && len(pcm) > sphinx.Rate && quiet(pcm[len(pcm)-sphinx.Rate*8/10:])
	})
	return bot.Heard(since)
}

func firstSoundAfter(bot *callerbot.Bot, t time.Time) time.Duration {
	if s, ok := bot.SoundAfter("", t); ok {
		return s.Start.Sub(t)
	}
	return -1
}
