package worker_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/opus"
	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// energyVAD scores a window by its loudness. It stands in for Silero VAD, whose engine
// is built and tested in its own package: here the conversation is under test, over real
// LiveKit media, with a detector whose decisions on synthetic speech are plain.
type energyVAD struct{}

func (energyVAD) WindowSize() int { return 512 }
func (energyVAD) Prob(w []int16) (float32, error) {
	var sum float64
	for _, v := range w {
		x := float64(v) / 32768
		sum += x * x
	}
	return float32(min(1, math.Sqrt(sum/float64(len(w)))/0.02)), nil
}
func (energyVAD) Reset()       {}
func (energyVAD) Close() error { return nil }

// closedSetRecognizer transcribes a turn with the real pocketsphinx, choosing among the
// sentences the test's caller can say.
type closedSetRecognizer struct{ sentences []string }

func (r closedSetRecognizer) NewTranscriber(context.Context) (speech.Transcriber, error) {
	return &closedSetTranscriber{sentences: r.sentences}, nil
}

type closedSetTranscriber struct {
	sentences []string
	pcm       []int16
}

func (t *closedSetTranscriber) Begin() error            { t.pcm = t.pcm[:0]; return nil }
func (t *closedSetTranscriber) Write(pcm []int16) error { t.pcm = append(t.pcm, pcm...); return nil }
func (t *closedSetTranscriber) End(ctx context.Context) (string, error) {
	return sphinx.Choose(ctx, t.pcm, t.sentences)
}
func (t *closedSetTranscriber) Abort()       { t.pcm = t.pcm[:0] }
func (t *closedSetTranscriber) Close() error { return nil }

// mouth is the test caller's microphone: silence, or what it is told to say, paced in
// real time as a person speaks.
type mouth struct {
	mu    sync.Mutex
	queue []*utterance
}

// utterance is one thing the caller says.
type utterance struct {
	pcm     []int16 // 48 kHz, whole 20 ms frames
	pos     int
	started chan time.Time // first frame sent
	ended   chan time.Time // last frame sent
	// speech is where the synthesised speech starts and ends (espeak-ng pads it with
	// silence): the caller's true onset and end of speech, from its own synthesis.
	speechFrom, speechTo time.Duration
}

func speak(tb testing.TB, bot *callerbot.Bot) *mouth {
	tb.Helper()
	m := &mouth{}
	track, err := lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2})
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := opus.NewEncoder(48000, 1)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	tb.Cleanup(func() { cancel(); <-done; enc.Close() })
	go func() {
		defer close(done)
		pkt := make([]byte, opus.MaxPacket)
		silence := make([]int16, 960)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			f := silence
			m.mu.Lock()
			if len(m.queue) > 0 {
				u := m.queue[0]
				if u.pos == 0 {
					u.started <- time.Now()
				}
				f = u.pcm[u.pos : u.pos+960]
				if u.pos += 960; u.pos >= len(u.pcm) {
					u.ended <- time.Now()
					m.queue = m.queue[1:]
				}
			}
			m.mu.Unlock()
			if n, err := enc.Encode(f, pkt); err == nil {
				_ = track.WriteSample(media.Sample{Data: append([]byte(nil), pkt[:n]...), Duration: 20 * time.Millisecond}, nil)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	if _, err := bot.Room().LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "caller-audio", Source: livekit.TrackSource_MICROPHONE}); err != nil {
		tb.Fatal(err)
	}
	return m
}

// say queues text, spoken with espeak-ng, after what the caller is already saying.
func (m *mouth) say(tb testing.TB, text string) *utterance {
	tb.Helper()
	pcm, err := (&espeak.Synthesizer{Voice: "en-us", WPM: 150}).Synthesize(context.Background(), text)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := resample.Mono(pcm.Samples, pcm.Rate, 48000)
	if err != nil {
		tb.Fatal(err)
	}
	out = append(out, make([]int16, 960-len(out)%960)...)
	u := &utterance{pcm: out, started: make(chan time.Time, 1), ended: make(chan time.Time, 1)}
	loud := func(i int) bool { return out[i] > 600 || out[i] < -600 }
	first, last := 0, len(out)-1
	for first < len(out) && !loud(first) {
		first++
	}
	for last > 0 && !loud(last) {
		last--
	}
	u.speechFrom = time.Duration(first) * time.Second / 48000
	u.speechTo = time.Duration(last+1) * time.Second / 48000
	m.mu.Lock()
	m.queue = append(m.queue, u)
	m.mu.Unlock()
	return u
}

// loudAfter is the first time after since the bot heard the persona speak.
func loudAfter(bot *callerbot.Bot, since time.Time) (time.Time, bool) {
	pcm := bot.Heard(since)
	for i := 0; i+320 <= len(pcm); i += 320 {
		if !quiet(pcm[i : i+320]) {
			return since.Add(time.Duration(i/320) * 20 * time.Millisecond), true
		}
	}
	return time.Time{}, false
}

// The caller asks, hears the answer, talks over a long reply (which stops and is
// recorded cut), asks again, and says goodbye; the model ends the call.
func TestConversation(t *testing.T) {
	const (
		q1 = "What time do you open?"
		q2 = "Do you deliver?"
		q3 = "Thank you, goodbye."
	)
	long := "We open at nine in the morning every day of the week. On Sundays we close early, at four in the afternoon. " +
		"Our shop is on the corner of the main street, next to the bakery. There is parking behind the building."
	fake := llmtest.New(llmtest.Reply{})
	defer fake.Close()
	fake.SetReplies(func(r llmtest.Request) llmtest.Reply {
		switch last := r.Messages[len(r.Messages)-1].Content; last {
		case joinWords(q1):
			return llmtest.Reply{Text: long}
		case joinWords(q2):
			return llmtest.Reply{Text: "Yes, we deliver."}
		case joinWords(q3):
			return llmtest.Reply{Text: "Goodbye!", EndCall: true}
		default:
			return llmtest.Reply{Text: "Sorry?"}
		}
	})

	e := newEnv(t)
	e.startWorkerWith(func(c *worker.Config) {
		c.TTS, c.LLMBaseURL, c.LLMModel = "espeak", fake.URL(), "fake-model"
	}, worker.Options{
		NewVAD:     func() (speech.VAD, error) { return energyVAD{}, nil },
		Recognizer: closedSetRecognizer{sentences: []string{q1, q2, q3}},
	})
	job := testJob("call_conv", "audio", "ava_theo")
	token := e.call("room-conv", job)
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	m := speak(t, bot)
	heardGreeting(t, bot)

	// 1. A question, answered.
	u1 := m.say(t, q1)
	eventually(t, 20*time.Second, "the model asked", func() bool { return len(fake.Requests()) == 1 })
	msgs := fake.Requests()[0].Messages
	want := []llmtest.Message{{Role: "system", Content: job.Version.SystemPrompt}, {Role: "assistant", Content: greeting}, {Role: "user", Content: joinWords(q1)}}
	if !slices.Equal(msgs, want) {
		t.Errorf("model got %+v, want %+v", msgs, want)
	}
	asked := time.Now()
	eventually(t, 10*time.Second, "the reply heard", func() bool { _, ok := loudAfter(bot, asked); return ok })

	// 2. Talked over two seconds in, the reply stops.
	time.Sleep(2 * time.Second)
	u2 := m.say(t, q2)
	onset := wait(t, u2.started, "q2 started").Add(u2.speechFrom)
	time.Sleep(1500 * time.Millisecond)
	// The persona's audio at the caller stops after its last loud 20 ms before the quiet
	// that lasts while the caller speaks.
	pcm := bot.Heard(onset)
	lastLoud := -1
	for i := 0; i+320 <= min(len(pcm), 1200*16); i += 320 {
		if !quiet(pcm[i : i+320]) {
			lastLoud = i / 320
		}
	}
	stopped := time.Duration(lastLoud+1) * 20 * time.Millisecond
	if stopped > 600*time.Millisecond {
		t.Errorf("persona audio heard until %v after the caller began talking over it, want it silent from within 600 ms", stopped)
	}
	t.Logf("talk-over onset (the caller's first speech sent) to the persona's audio stopping at the caller: %v", stopped)
	eventually(t, 20*time.Second, "the second question", func() bool { return len(fake.Requests()) == 2 })
	msgs = fake.Requests()[1].Messages
	if len(msgs) != 5 || msgs[3].Role != "assistant" || !strings.HasPrefix(long, msgs[3].Content) || len(msgs[3].Content) >= len(long) || msgs[4].Content != joinWords(q2) {
		t.Errorf("second request %+v, want the reply as heard (cut) and the new question", msgs)
	}

	// 3. Goodbye: the model ends the call after saying it.
	// Once q1 and q2 have been said and the answer to q2 has played (speech, then a second
	// of quiet), say goodbye.
	wait(t, u1.ended, "q1 said")
	q2End := wait(t, u2.ended, "q2 said")
	eventually(t, 15*time.Second, "the answer to q2", func() bool {
		heard := bot.Heard(q2End)
		_, spoke := loudAfter(bot, q2End)
		return spoke && len(heard) > sphinx.Rate && quiet(heard[len(heard)-sphinx.Rate:])
	})
	m.say(t, q3)
	reps := e.reportsUntilEnded(job.CallID, 30*time.Second)
	end := reps[len(reps)-1]
	if end.EndReason != persona.EndAssistantHangup {
		t.Errorf("end reason %q, want assistant_hangup", end.EndReason)
	}
	var got []string
	for _, turn := range end.Transcript {
		mark := ""
		if turn.Interrupted {
			mark = " (interrupted)"
		}
		got = append(got, turn.Speaker+": "+turn.Text+mark)
	}
	if len(end.Transcript) != 7 || end.Transcript[1].Text != joinWords(q1) || !end.Transcript[2].Interrupted ||
		end.Transcript[3].Text != joinWords(q2) || end.Transcript[4].Text != "Yes, we deliver." || end.Transcript[6].Text != "Goodbye!" {
		t.Errorf("transcript:\n%s\nwant greeting, q1, the cut reply, q2, its answer, goodbye both ways", strings.Join(got, "\n"))
	}
	for i := 1; i < len(end.Transcript); i++ {
		if end.Transcript[i].StartMS < end.Transcript[i-1].StartMS {
			t.Errorf("turn %d starts before turn %d: %+v", i, i-1, end.Transcript)
		}
	}
	mt := end.Metrics
	if mt.Turns == nil || *mt.Turns != 3 || mt.BargeIns == nil || *mt.BargeIns != 1 || mt.ResponseMS == nil || mt.BargeInStopMS == nil ||
		mt.STTFinalMS == nil || mt.LLMFirstTokenMS == nil || mt.TTSFirstAudioMS == nil || mt.Errors != nil {
		t.Errorf("metrics %+v", mt)
	} else {
		t.Logf("response p50 %d p95 %d ms; barge-in stop p50 %d ms; stt %d, llm first token %d, tts first audio %d ms (p50)",
			mt.ResponseMS.P50, mt.ResponseMS.P95, mt.BargeInStopMS.P50, mt.STTFinalMS.P50, mt.LLMFirstTokenMS.P50, mt.TTSFirstAudioMS.P50)
	}
}
