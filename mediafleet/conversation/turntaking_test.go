package conversation_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// longReply is a reply of about five seconds on the scripted line (100 ms a word).
const longReply = "Our roses come from three farms. Each farm grows a dozen kinds of rose. " +
	"We cut them every morning at six. They reach the shop by noon the same day."

// overReply asks a question, waits until the long reply has played a second, then says
// over it speech frames (speechLevel, or coughLevel for a sound without words) for
// spoken, and stays silent for after.
func overReply(t *testing.T, h *harness, level int16, spoken, after time.Duration) {
	t.Helper()
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "reply under way", func() bool { return h.state().sent >= 50 })
	h.line.alignToWindow(t, h.stopped)
	h.feed(t, level, spoken)
	h.feed(t, 0, after)
}

// count reads a metric, 0 when absent.
func count(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// TestBackchannelLetsTheReplyGoOn: "uh-huh" over the assistant, heard as interim words
// within the confirm window, resumes it at once: the reply plays to its end, the
// acknowledgement is in the transcript marked as a backchannel, and the model is asked
// nothing more.
func TestBackchannelLetsTheReplyGoOn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		interim bool
		spoken  time.Duration
	}{
		{"interim words", true, 400 * time.Millisecond},
		// Without interim words the reply is held while the caller speaks, and the
		// final words at the turn's end let it go on.
		{"final words only", false, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", "uh-huh"}, interim: tc.interim})
				overReply(t, h, speechLevel, tc.spoken, 600*time.Millisecond)
				h.eventually(t, "reply played", func() bool {
					for _, tu := range h.turns() {
						if tu.Speaker == "assistant" {
							return true
						}
					}
					return false
				})
				s := h.state()
				var said, back []persona.Turn
				for _, tu := range s.turns {
					switch {
					case tu.Speaker == "assistant":
						said = append(said, tu)
					case tu.Backchannel:
						back = append(back, tu)
					}
				}
				if len(said) != 1 || said[0].Text != longReply || said[0].Interrupted {
					t.Errorf("assistant turns %+v, want the whole reply, not interrupted", said)
				}
				if len(back) != 1 || back[0].Text != "uh-huh" {
					t.Errorf("backchannel turns %+v, want the uh-huh marked", back)
				}
				if n := len(h.srv.Requests()); n != 1 {
					t.Errorf("%d model requests, want 1: a backchannel is not a turn", n)
				}
				m := s.metrics
				if count(m.Backchannels) != 1 || count(m.BargeIns) != 0 || count(m.Turns) != 1 {
					t.Errorf("backchannels %d barge-ins %d turns %d, want 1, 0, 1", count(m.Backchannels), count(m.BargeIns), count(m.Turns))
				}
				if s.paused {
					t.Error("the line is still paused")
				}
			})
		})
	}
}

// TestBackchannelResumesWithinTheConfirmWindow: with interim words the assistant goes
// on as soon as the acknowledgement is heard, before the confirm window is over.
func TestBackchannelResumesWithinTheConfirmWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", "yeah"}, interim: true})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 50 })
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 200*time.Millisecond) // two windows' words: "yeah" by 100 ms
		if s := h.state(); s.paused || s.resumes != 1 {
			t.Errorf("paused %v after %d resumes, 200 ms into the caller's yeah: want resumed", s.paused, s.resumes)
		}
	})
}

// TestStopWordsCut: "wait, stop" over the assistant cuts it as before.
func TestStopWordsCut(t *testing.T) {
	for _, text := range []string{"wait stop", "hold on", "what time is it", "I want a different colour"} {
		t.Run(text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", text}, interim: true})
				overReply(t, h, speechLevel, 500*time.Millisecond, 600*time.Millisecond)
				h.eventually(t, "second answer", func() bool { return len(h.srv.Requests()) == 2 })
				turns := h.turns()
				if len(turns) < 3 || !turns[1].Interrupted || turns[2].Text != text || turns[2].Backchannel {
					t.Fatalf("turns %+v, want the reply cut and %q a turn", turns, text)
				}
				if m := h.metrics(); count(m.BargeIns) != 1 || count(m.Backchannels) != 0 {
					t.Errorf("barge-ins %d backchannels %d, want 1 and 0", count(m.BargeIns), count(m.Backchannels))
				}
			})
		})
	}
}

// TestStopWordCutsWithinTheConfirmWindow: the interim "wait" cuts the reply before the
// confirm window is over.
func TestStopWordCutsWithinTheConfirmWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", "wait stop"}, interim: true})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 50 })
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 200*time.Millisecond)
		if m := h.metrics(); count(m.BargeIns) != 1 {
			t.Errorf("barge-ins %d 200 ms into \"wait\", want 1", count(m.BargeIns))
		}
	})
}

// TestFalseInterruptionResumes: a sound over the assistant longer than the confirm
// window that holds no words (a door) resumes the reply where it stopped, and counts as
// a false interruption; before, it cut the reply and left silence.
func TestFalseInterruptionResumes(t *testing.T) {
	for _, interim := range []bool{false, true} {
		t.Run(map[bool]string{false: "final words only", true: "interim words"}[interim], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses"}, interim: interim})
				overReply(t, h, coughLevel, 700*time.Millisecond, 0)
				at := h.state()
				if !at.paused {
					t.Fatal("the sound did not pause the assistant")
				}
				h.eventually(t, "reply played", func() bool { return len(h.turns()) == 2 })
				s := h.state()
				if s.turns[1].Text != longReply || s.turns[1].Interrupted || s.sent <= at.sent {
					t.Errorf("assistant turn %+v, want the whole reply after the sound", s.turns[1])
				}
				if m := s.metrics; count(m.FalseInterruptions) != 1 || count(m.BargeIns) != 0 {
					t.Errorf("false interruptions %d barge-ins %d, want 1 and 0", count(m.FalseInterruptions), count(m.BargeIns))
				}
				if n := len(h.srv.Requests()); n != 1 {
					t.Errorf("%d model requests, want 1", n)
				}
			})
		})
	}
}

// TestInterruptionOff: a version with interruption off takes "uh-huh" over the
// assistant as a barge-in, and a long sound cuts the reply for good.
func TestInterruptionOff(t *testing.T) {
	v := version
	v.Interruption = &persona.Interruption{Mode: persona.InterruptionOff}
	synctest.Test(t, func(t *testing.T) {
		h := startVersion(t, v, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", "uh-huh"}, interim: true})
		overReply(t, h, speechLevel, 400*time.Millisecond, 600*time.Millisecond)
		h.eventually(t, "answer to the uh-huh", func() bool { return len(h.srv.Requests()) == 2 })
		if tu := h.turns(); !tu[1].Interrupted || tu[2].Text != "uh-huh" || tu[2].Backchannel {
			t.Errorf("turns %+v, want the reply cut and uh-huh a turn", tu)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := startVersion(t, v, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses"}})
		overReply(t, h, coughLevel, 700*time.Millisecond, 600*time.Millisecond)
		h.feed(t, 0, 2*time.Second)
		if tu := h.turns(); len(tu) != 2 || !tu[1].Interrupted {
			t.Errorf("turns %+v, want the reply cut for good", tu)
		}
	})
}

// TestInterruptionTuned: min_words lets two words pass, a version's own
// acknowledgement passes, a stop word still cuts.
func TestInterruptionTuned(t *testing.T) {
	v := version
	v.Interruption = &persona.Interruption{MinWords: 3, Acknowledgements: []string{"Gotcha"}}
	for _, tc := range []struct {
		text string
		cut  bool
	}{{"oh nice", false}, {"gotcha", false}, {"stop", true}, {"that sounds lovely", true}} {
		t.Run(tc.text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startVersion(t, v, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", tc.text}, interim: true})
				overReply(t, h, speechLevel, 300*time.Millisecond, 600*time.Millisecond)
				h.feed(t, 0, 6*time.Second)
				if got := count(h.metrics().BargeIns) == 1; got != tc.cut {
					t.Errorf("%q cut the reply: %v, want %v", tc.text, got, tc.cut)
				}
			})
		})
	}
}

// TestUnfinishedSentenceWaits: "I'd like to book a" ... 700 ms ... "table for two."
// is one turn and one answer; the fixed end of turn cut it in two.
func TestUnfinishedSentenceWaits(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		t.Run(map[bool]string{false: "by words", true: "fixed silence"}[fixed], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startWith(t, llmtest.Reply{Text: "For what time?"}, func(c *conversation.Config) { c.FixedEndOfTurn = fixed },
					&recognizer{texts: []string{"I'd like to book a table for two.", "table for two."}, interim: true})
				h.feed(t, 0, 100*time.Millisecond)
				h.feed(t, speechLevel, 500*time.Millisecond) // "I'd like to book a"
				h.feed(t, 0, 700*time.Millisecond)
				h.feed(t, speechLevel, 300*time.Millisecond) // "table for two."
				h.feed(t, 0, 2*time.Second)
				want := 1
				if fixed {
					want = 2
				}
				if n := len(h.srv.Requests()); n != want {
					t.Errorf("%d model requests, want %d", n, want)
				}
				if m := h.metrics(); !fixed && (count(m.MidSentenceWaits) != 1 || count(m.Turns) != 1) {
					t.Errorf("mid-sentence waits %d turns %d, want 1 and 1", count(m.MidSentenceWaits), count(m.Turns))
				}
			})
		})
	}
}

// TestFinishedSentenceAnsweredSooner: a turn whose words end a question ends after the
// short silence (the 8th 32 ms window, 256 ms), not the fixed one (416 ms); one without
// words the recogniser could read keeps the fixed silence.
func TestFinishedSentenceAnsweredSooner(t *testing.T) {
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"When do you open?", 256 * time.Millisecond},
		{"my number is four one five", 1504 * time.Millisecond},
		{"roses", 416 * time.Millisecond},
	} {
		t.Run(tc.text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				words := len(strings.Fields(tc.text))
				h := startWith(t, llmtest.Reply{Text: "At nine."}, nil, &recognizer{texts: []string{tc.text}, interim: true})
				h.feed(t, 0, 96*time.Millisecond)
				h.feed(t, speechLevel, time.Duration(words)*100*time.Millisecond+20*time.Millisecond)
				h.eventually(t, "answer", func() bool { return len(h.turns()) == 2 })
				var got []time.Duration
				for _, a := range eventsOf[speech.Answered](h.state().events) {
					got = append(got, a.Timing.Decided.Sub(a.Timing.LastSpeech))
				}
				// Decisions fall on VAD windows (32 ms), stamped at the caller's frames (20 ms).
				if len(got) != 1 || got[0] < tc.want-20*time.Millisecond || got[0] > tc.want+20*time.Millisecond {
					t.Errorf("end of speech to the end-of-turn decision %v, want %v within a frame", got, tc.want)
				}
			})
		})
	}
}
