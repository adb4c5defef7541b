package conversation_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestBackchannelResumesAtThePause: with interim words the assistant goes on as soon
// as the caller pauses after an acknowledgement, long before the end of the turn; while
// they still speak it stays paused ("yeah, but..." may follow).
func TestBackchannelResumesAtThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWith(t, llmtest.Reply{Text: longReply}, nil, &recognizer{texts: []string{"tell me about roses", "yeah"}, interim: true})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 50 })
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 200*time.Millisecond) // "yeah" by 100 ms
		if s := h.state(); !s.paused {
			t.Error("the assistant went on while the caller was still speaking")
		}
		h.feed(t, 0, 80*time.Millisecond) // the first silent window
		if s := h.state(); s.paused || s.resumes != 1 || h.rec.turns() != 1 {
			t.Errorf("paused %v after %d resumes, %d turns ended, 80 ms into the pause after yeah: want resumed before the turn's end", s.paused, s.resumes, h.rec.turns())
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

// TestStopWordCutsWithinTheConfirmWindow: the interim "wait stop" cuts the reply before
// the confirm window is over. The interim "wait" alone holds it (paused): a recogniser's
// last interim word is a guess, and "oh" of "okay" may read "no" for a moment.
func TestStopWordCutsWithinTheConfirmWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recognizer{texts: []string{"tell me about roses", "wait stop"}, interim: true}
		h := startWith(t, llmtest.Reply{Text: longReply}, nil, rec)
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 50 })
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 150*time.Millisecond)
		if got := (interimTranscriber{rec}).Interim(); got != "wait" {
			t.Fatalf("interim words 150 ms in: %q, want \"wait\"", got)
		}
		if m := h.metrics(); count(m.BargeIns) != 0 || !h.state().paused {
			t.Errorf("150 ms into \"wait\": barge-ins %d, paused %v; want the reply held, not cut", count(m.BargeIns), h.state().paused)
		}
		h.feed(t, speechLevel, 120*time.Millisecond)
		if m := h.metrics(); count(m.BargeIns) != 1 {
			t.Errorf("barge-ins %d 270 ms into \"wait stop\", want 1", count(m.BargeIns))
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

// TestPauseWeighedWithItsLastWord: interim words that lag the audio (pocketsphinx's,
// read a few times a second) do not end a turn early. "I'd like to book a" pauses 700 ms
// after "a", and the pause must be weighed with that "a", which the words read at
// intervals may have only after the fixed silence would have ended the turn. The
// padding before onset moves where the reads fall against the pause: read at intervals,
// some turns are cut in two; caught up, none is.
func TestPauseWeighedWithItsLastWord(t *testing.T) {
	for _, catchUp := range []bool{true, false} {
		t.Run(map[bool]string{true: "caught up", false: "read at intervals"}[catchUp], func(t *testing.T) {
			var cut []time.Duration
			for pad := 32 * time.Millisecond; pad <= 320*time.Millisecond; pad += 32 * time.Millisecond {
				synctest.Test(t, func(t *testing.T) {
					h := startWith(t, llmtest.Reply{Text: "For what time?"}, func(c *conversation.Config) { c.Padding = pad },
						&recognizer{texts: []string{"I'd like to book a table.", "table."}, lag: true, catchUp: catchUp})
					h.feed(t, 0, 400*time.Millisecond)
					h.feed(t, speechLevel, 500*time.Millisecond) // "I'd like to book a"
					h.feed(t, 0, 700*time.Millisecond)
					h.feed(t, speechLevel, 100*time.Millisecond) // "table."
					h.feed(t, 0, 2*time.Second)
					if n := len(h.srv.Requests()); n != 1 {
						cut = append(cut, pad)
					}
				})
			}
			switch {
			case catchUp && len(cut) > 0:
				t.Errorf("cut with padding %v; want every pause weighed with its last word", cut)
			case !catchUp && len(cut) == 0:
				t.Error("no turn cut with the words read at intervals: the test shows nothing")
			}
			t.Logf("cut with padding %v", cut)
		})
	}
}

// TestMidSentenceCutCounted: a turn that ends on unfinished words, the caller silent
// past the longer wait, is answered and counted a mid-sentence cut; a finished one is
// not.
func TestMidSentenceCutCounted(t *testing.T) {
	for _, tc := range []struct {
		text string
		cuts int
	}{{"I'd like to book a", 1}, {"I'd like to book a table.", 0}} {
		t.Run(tc.text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startWith(t, llmtest.Reply{Text: "For what time?"}, nil, &recognizer{texts: []string{tc.text}, interim: true})
				h.feed(t, 0, 100*time.Millisecond)
				h.feed(t, speechLevel, time.Duration(len(strings.Fields(tc.text)))*100*time.Millisecond)
				h.feed(t, 0, 3*time.Second)
				if n := len(h.srv.Requests()); n != 1 {
					t.Errorf("%d model requests, want the turn answered", n)
				}
				if m := h.metrics(); count(m.MidSentenceCuts) != tc.cuts || count(m.Turns) != 1 {
					t.Errorf("mid-sentence cuts %d turns %d, want %d and 1", count(m.MidSentenceCuts), count(m.Turns), tc.cuts)
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

// turnFigures are the turn-taking figures of the scripted calls of TestTurnTaking.
type turnFigures struct {
	// DecisionMS is the silence from the end of a finished sentence to the end-of-turn
	// decision, ReplyMS to the reply's first frame sent (the scripted model and voice
	// take next to nothing); p50 over the finished sentences.
	DecisionMS, ReplyMS int64
	// PausesCut of Pauses mid-sentence pauses ended the turn.
	Pauses, PausesCut int
	// BackchannelsCut of Backchannels acknowledgements over a reply cancelled it.
	Backchannels, BackchannelsCut int
	// Recovered of Sounds sounds without words over a reply let it play to its end.
	Sounds, Recovered int
}

// finishedSentences are caller turns whose words end a sentence or question, with the
// recogniser's punctuation or without it.
var finishedSentences = []string{
	"When do you open?", "I'd like to order roses.", "Do you deliver on Sundays?", "How much are the tulips?",
	"Thank you, that's all.", "what time do you close", "can I pay by card",
}

// midSentencePauses are turns the caller pauses in: the words before the pause, after
// it, and the pause.
var midSentencePauses = []struct {
	before, after string
	pause         time.Duration
}{
	{"I'd like to book a", "table for two.", 500 * time.Millisecond},
	{"I'd like to book a", "table for two.", 700 * time.Millisecond},
	{"I'd like to book a", "table for two.", 1000 * time.Millisecond},
	{"my number is four one five", "five five one two.", 600 * time.Millisecond},
	{"my number is four one five", "five five one two.", 900 * time.Millisecond},
	{"can I order some roses and", "tulips?", 700 * time.Millisecond},
	{"I'm calling about my order from", "last Tuesday.", 800 * time.Millisecond},
	{"the delivery should go to", "twelve Elm Street.", 600 * time.Millisecond},
	{"I'd like red roses", "and white tulips.", 600 * time.Millisecond},
	{"um", "do you have lilies?", 700 * time.Millisecond},
}

var backchannelWords = []string{"uh-huh", "yeah", "right", "okay", "mm-hmm", "I see"}

var soundsWithoutWords = []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 700 * time.Millisecond, 1200 * time.Millisecond}

// runTurnTaking runs the scripted calls, by words or (baseline) by the fixed silence
// with interruption off: the rules before turn-taking by words.
func runTurnTaking(t *testing.T, baseline bool) turnFigures {
	var f turnFigures
	v := version
	mod := func(c *conversation.Config) {}
	if baseline {
		v.Interruption = &persona.Interruption{Mode: persona.InterruptionOff}
		mod = func(c *conversation.Config) { c.FixedEndOfTurn = true }
	}
	var decided, replied []time.Duration
	for _, text := range finishedSentences {
		t.Run("finished/"+text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startVersion(t, v, llmtest.Reply{Text: "Sure."}, mod, &recognizer{texts: []string{text}, interim: true})
				h.feed(t, 0, 96*time.Millisecond)
				h.feed(t, speechLevel, time.Duration(len(strings.Fields(text)))*100*time.Millisecond+20*time.Millisecond)
				h.eventually(t, "answer", func() bool { return len(h.turns()) == 2 })
				for _, a := range eventsOf[speech.Answered](h.state().events) {
					decided = append(decided, a.Timing.Decided.Sub(a.Timing.LastSpeech))
					replied = append(replied, a.Timing.Response())
				}
			})
		})
	}
	f.DecisionMS, f.ReplyMS = median(decided).Milliseconds(), median(replied).Milliseconds()
	for _, p := range midSentencePauses {
		t.Run("pause/"+p.before, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				whole := p.before + " " + p.after
				h := startVersion(t, v, llmtest.Reply{Text: "Sure."}, mod, &recognizer{texts: []string{whole, p.after}, interim: true})
				h.feed(t, 0, 96*time.Millisecond)
				h.feed(t, speechLevel, time.Duration(len(strings.Fields(p.before)))*100*time.Millisecond)
				h.feed(t, 0, p.pause)
				h.feed(t, speechLevel, time.Duration(len(strings.Fields(p.after)))*100*time.Millisecond)
				h.feed(t, 0, 2*time.Second)
				f.Pauses++
				if h.rec.turns() > 1 {
					f.PausesCut++
					t.Logf("cut after %q", p.before)
				}
			})
		})
	}
	for _, w := range backchannelWords {
		t.Run("backchannel/"+w, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startVersion(t, v, llmtest.Reply{Text: longReply}, mod, &recognizer{texts: []string{"tell me about roses", w}, interim: true})
				overReply(t, h, speechLevel, time.Duration(len(strings.Fields(w)))*100*time.Millisecond+300*time.Millisecond, 600*time.Millisecond)
				h.feed(t, 0, 6*time.Second)
				f.Backchannels++
				if count(h.metrics().BargeIns) > 0 {
					f.BackchannelsCut++
				}
			})
		})
	}
	for _, d := range soundsWithoutWords {
		t.Run("sound/"+d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startVersion(t, v, llmtest.Reply{Text: longReply}, mod, &recognizer{texts: []string{"tell me about roses"}})
				overReply(t, h, coughLevel, d, 600*time.Millisecond)
				h.feed(t, 0, 6*time.Second)
				f.Sounds++
				if tu := h.turns(); len(tu) == 2 && tu[1].Text == longReply {
					f.Recovered++
				}
			})
		})
	}
	return f
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// TestTurnTaking runs the scripted calls of the benchmark both ways: by words, a
// finished sentence is answered sooner than after the fixed silence, no pause after
// unfinished words ends the turn, no acknowledgement cancels a reply, and every sound
// without words lets it go on; the fixed rules do worse on each. With
// TURNTAKING_FIGURES set it writes both sets of figures there as JSON
// (BenchmarkTurnTaking reads them).
func TestTurnTaking(t *testing.T) {
	var now, before turnFigures
	t.Run("by words", func(t *testing.T) { now = runTurnTaking(t, false) })
	t.Run("fixed", func(t *testing.T) { before = runTurnTaking(t, true) })
	if now.DecisionMS >= before.DecisionMS || now.DecisionMS > 260 {
		t.Errorf("decision after a finished sentence %d ms (fixed: %d), want at most 260 and less than fixed", now.DecisionMS, before.DecisionMS)
	}
	// One pause of the set follows words that could end the turn ("I'd like red
	// roses" ... "and white tulips"): no rule on words keeps it, only the fixed silence
	// (or a model) could.
	if now.PausesCut > 1 || now.PausesCut >= before.PausesCut {
		t.Errorf("%d of %d mid-sentence pauses cut (fixed: %d), want at most the one after complete-looking words", now.PausesCut, now.Pauses, before.PausesCut)
	}
	if now.BackchannelsCut != 0 || before.BackchannelsCut != before.Backchannels {
		t.Errorf("backchannels cut a reply %d times (fixed: %d of %d), want none", now.BackchannelsCut, before.BackchannelsCut, before.Backchannels)
	}
	if now.Recovered != now.Sounds || before.Recovered >= now.Recovered {
		t.Errorf("%d of %d sounds without words recovered (fixed: %d), want all", now.Recovered, now.Sounds, before.Recovered)
	}
	if path := os.Getenv("TURNTAKING_FIGURES"); path != "" {
		b, _ := json.Marshal(map[string]turnFigures{"words": now, "fixed": before})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkTurnTaking reports the figures of TestTurnTaking's scripted calls, by words
// and by the fixed rules, side by side. The calls run on testing/synctest's simulated
// clock, which needs a test: the benchmark runs TestTurnTaking in a child process of the
// test binary and reads its figures.
func BenchmarkTurnTaking(b *testing.B) {
	path := filepath.Join(b.TempDir(), "figures.json")
	var got map[string]turnFigures
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestTurnTaking$", "-test.count", "1")
		cmd.Env = append(os.Environ(), "TURNTAKING_FIGURES="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("TestTurnTaking: %v\n%s", err, out)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			b.Fatal(err)
		}
	}
	now, before := got["words"], got["fixed"]
	b.ReportMetric(float64(now.DecisionMS), "eot-ms-p50")
	b.ReportMetric(float64(before.DecisionMS), "fixed-eot-ms-p50")
	b.ReportMetric(float64(now.ReplyMS), "reply-ms-p50")
	b.ReportMetric(float64(before.ReplyMS), "fixed-reply-ms-p50")
	b.ReportMetric(100*float64(now.PausesCut)/float64(max(1, now.Pauses)), "pauses-cut-%")
	b.ReportMetric(100*float64(before.PausesCut)/float64(max(1, before.Pauses)), "fixed-pauses-cut-%")
	b.ReportMetric(float64(now.BackchannelsCut), "backchannels-cancelled")
	b.ReportMetric(float64(before.BackchannelsCut), "fixed-backchannels-cancelled")
	b.ReportMetric(float64(now.Recovered), "false-interruptions-recovered")
	b.ReportMetric(float64(before.Recovered), "fixed-false-interruptions-recovered")
	b.Logf("by words %+v; fixed %+v", now, before)
}

// TestAcknowledgementAfterTheReplyIsATurn: "yes" said over the end of the assistant's
// question, and going on after it finished, is answered: with nothing left to say, the
// assistant's acknowledgement rule does not swallow the caller's answer.
func TestAcknowledgementAfterTheReplyIsATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startWith(t, llmtest.Reply{Text: "Would you like roses?"}, nil, &recognizer{texts: []string{"flowers please", "yes"}, interim: true})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "question under way", func() bool { return h.state().sent >= 15 })
		h.srv.SetReply(llmtest.Reply{Text: "Red or white?"})
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 200*time.Millisecond) // "yes" over "roses?"
		h.feed(t, 0, 2*time.Second)
		if n := len(h.srv.Requests()); n != 2 {
			t.Errorf("%d model requests, want the yes answered", n)
		}
		if m := h.metrics(); count(m.Backchannels) != 0 {
			t.Errorf("%d backchannels, want none", count(m.Backchannels))
		}
	})
}

// TestSpanishTurnTaking: a Spanish version's call asks the recogniser for Spanish and
// speaks with the Spanish default voice; over its reply "vale" is a backchannel (the
// reply plays to its end) and "espera un momento" cuts it, by the Spanish rules.
func TestSpanishTurnTaking(t *testing.T) {
	v := version
	v.Language = "es"
	for _, tc := range []struct {
		said      string
		backchann bool
	}{{"vale", true}, {"espera un momento", false}} {
		t.Run(tc.said, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recognizer{texts: []string{"háblame de las rosas", tc.said}, interim: true}
				h := startVersion(t, v, llmtest.Reply{Text: longReply}, nil, rec)
				overReply(t, h, speechLevel, 400*time.Millisecond, 600*time.Millisecond)
				said := func() []persona.Turn {
					var out []persona.Turn
					for _, tu := range h.turns() {
						if tu.Speaker == "assistant" {
							out = append(out, tu)
						}
					}
					return out
				}
				if tc.backchann {
					h.eventually(t, "reply played", func() bool { return len(said()) == 1 })
				} else {
					h.eventually(t, "second answer", func() bool { return len(h.srv.Requests()) == 2 })
				}
				turns, m := h.turns(), h.metrics()
				switch {
				case tc.backchann && (count(m.Backchannels) != 1 || count(m.BargeIns) != 0 || said()[0].Interrupted || said()[0].Text != longReply):
					t.Errorf("turns %+v, backchannels %d, barge-ins %d; want %q a backchannel and the whole reply", turns, count(m.Backchannels), count(m.BargeIns), tc.said)
				case !tc.backchann && (count(m.BargeIns) != 1 || count(m.Backchannels) != 0 || len(turns) < 3 || !turns[1].Interrupted || turns[2].Text != tc.said):
					t.Errorf("turns %+v, barge-ins %d; want the reply cut by %q", turns, count(m.BargeIns), tc.said)
				}
				rec.mu.Lock()
				langs := slices.Clone(rec.languages)
				rec.mu.Unlock()
				if !slices.Equal(langs, []string{"es"}) {
					t.Errorf("the recogniser was asked for %q, want [es]", langs)
				}
				h.syn.mu.Lock()
				voices := slices.Clone(h.voices)
				h.syn.mu.Unlock()
				if len(voices) == 0 || slices.ContainsFunc(voices, func(id string) bool { return id != "espeak-es-f3" }) {
					t.Errorf("spoke with %q, want the Spanish default voice espeak-es-f3 only", voices)
				}
			})
		})
	}
}

// TestSpanishPhrases: the assistant's own phrases follow the version's language: a
// Spanish version asks "¿Sigue ahí?" after its idle timeout, not the English question.
func TestSpanishPhrases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := version
		v.Language, v.IdleTimeoutSeconds = "es-ES", 12
		h := startCall(t, llmtest.Reply{Text: "Claro."}, nil, &recognizer{}, v, nil)
		h.eventually(t, "the question", func() bool { return len(h.syn.said()) > 0 })
		if got := h.syn.said(); !slices.Equal(got, []string{"¿Sigue ahí?"}) {
			t.Errorf("said %q, want the Spanish question once", got)
		}
	})
}
