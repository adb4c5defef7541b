package sip_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestAMDOverSIP is answering-machine detection on calls to real SIP phones (baresip,
// through livekit-sip, so the callee's audio is G.711 from the phone network's side),
// each phone answering with a recording, as issue 34 asks:
//   - a voicemail box (a greeting in flite's voice, then a 1 kHz beep) is decided
//     voicemail within 3 s of the answer; the phone hears nothing of the assistant
//     before its beep has ended, and then the voicemail message;
//   - a person ("Hello?" and a pause) is decided human and hears the greeting;
//   - a phone that says nothing is decided silence and hears the greeting.
//
// A call-screening prompt is not here: it is decided by the recogniser's words, and
// pocketsphinx on phone-band audio does not hear them (a flite prompt through G.711:
// "the route who yearn along like their art are in" for "Please say your name and why
// you are calling"), so its length decides voicemail. TestAMDOnSim covers screening on
// wide-band audio; a hosted recogniser's words, later than the length on a phone line,
// revise the decision (mediafleet/amd TestWords).
func TestAMDOverSIP(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	const (
		greeting = "Hello, this is the dental office."
		message  = "Please call the dental office back tomorrow morning."
		box      = "Hi, you have reached Ann. I can not take your call right now. Please leave a message after the tone."
	)
	a := r.assistant(t, greeting, nil)
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	cases := []struct {
		name  string
		parts []part
		want  string
	}{
		{"voicemail box", []part{{say: box}, {pause: 400 * time.Millisecond}, {beep: 500 * time.Millisecond}}, persona.AnsweredVoicemail},
		{"person", []part{{pause: 300 * time.Millisecond}, {say: "Hello?"}}, persona.AnsweredHuman},
		{"silence", nil, persona.AnsweredSilence},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			wav, said := speechWAV(t, append(c.parts, part{pause: 40 * time.Second})...)
			callee := r.phone(t, sipphone.Config{Number: fmt.Sprintf("+155576501%d", 71+i), Speak: wav, AutoAnswer: true})
			tr := r.trunk(t, callee.Address())
			l := r.line(t, fmt.Sprintf("+155501701%d", 71+i), tr.ID, map[string]any{"assistant_id": a.ID})
			var ses struct {
				ID     string `json:"id"`
				CallID string `json:"call_id"`
			}
			harness.Must(t, r.do(t, http.MethodPost, "/v1/sessions", map[string]any{"line_id": l.ID, "platform_handle": callee.Number(),
				"mode": "assistant", "assistant_id": a.ID, "amd": map[string]any{"voicemail_message": message}}, &ses),
				http.StatusCreated, "POST /v1/sessions")
			in, err := callee.Incoming(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if est, err := in.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED"); err != nil || est.Type != "CALL_ESTABLISHED" {
				t.Fatalf("the callee: %+v %v, want the call answered", est, err)
			}
			var rec struct {
				AMD *struct {
					Result      string `json:"result"`
					DecisionMS  int64  `json:"decision_ms"`
					MessageLeft bool   `json:"message_left"`
				} `json:"amd"`
			}
			harness.WaitFor(t, 30*time.Second, "the decision", func() bool {
				r.do(t, http.MethodGet, "/v1/calls/"+ses.CallID, nil, &rec)
				return rec.AMD != nil
			})
			t.Logf("decided %s after %d ms", rec.AMD.Result, rec.AMD.DecisionMS)
			if rec.AMD.Result != c.want {
				t.Fatalf("amd %+v, want %s", rec.AMD, c.want)
			}
			if c.want == persona.AnsweredVoicemail && rec.AMD.DecisionMS > 3000 {
				t.Errorf("a voicemail box decided after %d ms, want within 3 s", rec.AMD.DecisionMS)
			}
			if c.want == persona.AnsweredVoicemail {
				if _, err := in.Closed(ctx); err != nil {
					t.Fatal(err)
				}
				rec, _ := r.ended(t, ses.CallID)
				heard, err := callee.Heard()
				if err != nil {
					t.Fatal(err)
				}
				keepAudio(t, "heard", heard.Samples)
				beepEnd := said[len(said)-1].end + 900*time.Millisecond // the box's last words, the pause, the beep
				snds := sounds(heard.Samples)
				if len(snds) == 0 || snds[0].start < beepEnd {
					t.Fatalf("the box heard %v; want the first sound after its beep ended at %v", snds, beepEnd)
				}
				if got := heardSentence(t, heard.Samples, snds[0], message, greeting); got != words(message) {
					t.Errorf("the box recorded %q after its beep, want the voicemail message", got)
				}
				if len(rec.Transcript) != 1 || rec.Transcript[0].Text != message {
					t.Errorf("transcript %+v, want the voicemail message alone", rec.Transcript)
				}
				return
			}
			// The person and the silent phone hear the greeting.
			assistantSaid(t, turns, ses.CallID, "dental office")
			harness.Must(t, r.do(t, http.MethodDelete, "/v1/sessions/"+ses.ID, nil, nil), http.StatusOK, "DELETE")
			if _, err := in.Closed(ctx); err != nil {
				t.Fatal(err)
			}
			heard, err := callee.Heard()
			if err != nil {
				t.Fatal(err)
			}
			snds := sounds(heard.Samples)
			if len(snds) == 0 || heardSentence(t, heard.Samples, snds[0], greeting, message) != words(greeting) {
				keepAudio(t, "heard", heard.Samples)
				t.Errorf("the callee's first sound (%v) is not the greeting", snds)
			}
		})
	}
}
