package sessions_test

import (
	"context"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/recording"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings"
)

// TestRecordingEndToEnd: an assistant whose version records takes a sim call; the
// caller asks a question and hears the reply, then hangs up. The worker's file holds the
// caller's question on the left channel and the greeting and the reply on the right, each
// where it happened on the call's clock (from the answer) and not on the other channel,
// and pocketsphinx hears the question on the caller's channel.
func TestRecordingEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	const reply = "We open at nine in the morning."
	fake := llmtest.New(llmtest.Reply{Text: reply})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	store := &recordings.Folder{Dir: t.TempDir()}
	var mu sync.Mutex
	ended := map[string]persona.Report{}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(),
		Model: model, Recordings: store, OnCallEnded: func(r persona.Report) {
			mu.Lock()
			ended[r.CallID] = r
			mu.Unlock()
		}})

	const greeting = "Hello, how can I help you?"
	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Recorded desk", "system_prompt": "Answer the phone.",
		"greeting": greeting, "avatar_id": "ava_theo", "recording": "audio"}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")

	c := placeConvCall(t, st)
	greetingHeard := span(c.bot.Sounds(), time.Time{}, time.Now())
	q := c.say(qOpen)
	first := c.heardAfter(q.End, "the reply")
	c.waitQuiet(first.Start, "the reply")
	heard := span(c.bot.Sounds(), q.End, time.Now())
	rec := c.hangUp()
	answered, err := time.Parse(time.RFC3339Nano, str(rec.AnsweredAt))
	if err != nil {
		t.Fatalf("answered_at %v: %v", rec.AnsweredAt, err)
	}

	var rep persona.Report
	harness.WaitFor(t, 10*time.Second, "the worker's ended report", func() bool {
		mu.Lock()
		defer mu.Unlock()
		rep = ended[c.callID]
		return rep.Kind == persona.ReportEnded
	})
	r := rep.Recording
	if r == nil || r.Key != recordings.Key(st.AccountID, c.callID) || r.Format != "ogg_opus" || r.Error != "" {
		t.Fatalf("ended report's recording = %+v, want the stored file's key", r)
	}
	f, err := os.Open(filepath.Join(store.Dir, filepath.FromSlash(r.Key)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Size() != r.SizeBytes {
		t.Errorf("file of %d bytes, the report says %d", st.Size(), r.SizeBytes)
	}
	left, right, err := recording.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	endedAt, _ := time.Parse(time.RFC3339Nano, str(rec.EndedAt))
	if got, want := time.Duration(len(left))*time.Second/recording.Rate, endedAt.Sub(answered); got < want-2*time.Second || got > want+time.Second {
		t.Errorf("the file lasts %s; the call from answer to end %s", got, want)
	}

	// Where each sound is on the call's clock. What the caller hears left the worker a
	// network's delay before (under 200 ms here); what the caller says reaches it as late.
	at := func(t time.Time) float64 { return t.Sub(answered).Seconds() }
	const edge = 0.3 // seconds kept clear of a sound's ends
	level := func(pcm []int16, from, to float64) float64 {
		a, b := max(0, int(from*recording.Rate)), min(len(pcm), int(to*recording.Rate))
		if b <= a {
			return math.Inf(-1)
		}
		var sum float64
		for _, v := range pcm[a:b] {
			x := float64(v) / 32768
			sum += x * x
		}
		return 10 * math.Log10(sum/float64(b-a)+1e-12)
	}
	for _, w := range []struct {
		name        string
		on, off     []int16
		start, stop time.Time
	}{
		{"the greeting (assistant, right)", right, left, greetingHeard.Start, greetingHeard.End},
		{"the question (caller, left)", left, right, q.Start, q.End},
		{"the reply (assistant, right)", right, left, heard.Start, heard.End},
	} {
		from, to := at(w.start)+edge, at(w.stop)-edge
		on, off := level(w.on, from, to), level(w.off, from, to)
		t.Logf("%s at %.2f-%.2f s: %.1f dBFS on its channel, %.1f on the other", w.name, at(w.start), at(w.stop), on, off)
		if on < -45 || on-off < 25 {
			t.Errorf("%s at %.2f-%.2f s: %.1f dBFS on its channel, %.1f on the other; want speech on its own channel only", w.name, from, to, on, off)
		}
	}
	// Onsets: the question starts on the caller's channel as the caller starts saying it
	// (plus the way to the worker), the reply on the assistant's as it leaves the worker
	// (the way to the caller before its onset there).
	onset := func(pcm []int16, after float64) float64 {
		for i := max(0, int(after*recording.Rate)); i+320 <= len(pcm); i += 160 {
			if level(pcm, float64(i)/recording.Rate, float64(i+320)/recording.Rate) > -40 {
				return float64(i) / recording.Rate
			}
		}
		return math.Inf(1)
	}
	if got, want := onset(left, at(greetingHeard.End)), at(q.Start); got < want-0.05 || got > want+0.3 {
		t.Errorf("the question starts at %.3f s of the caller's channel; the caller started it at %.3f s", got, want)
	}
	if got, want := onset(right, at(q.End)), at(heard.Start); got < want-0.3 || got > want+0.05 {
		t.Errorf("the reply starts at %.3f s of the assistant's channel; the caller heard it at %.3f s", got, want)
	}
	// Before the greeting and between the question and the reply: nobody speaks.
	for _, gap := range [][2]float64{{0, at(greetingHeard.Start) - edge}, {at(q.End) + edge, at(heard.Start) - edge}} {
		if gap[1]-gap[0] < 0.1 {
			continue
		}
		if l, r := level(left, gap[0], gap[1]), level(right, gap[0], gap[1]); l > -55 || r > -55 {
			t.Errorf("silence at %.2f-%.2f s: left %.1f, right %.1f dBFS", gap[0], gap[1], l, r)
		}
	}
	// The caller's channel, cut around the question, is the question's words.
	from, to := max(0, int((at(q.Start)-0.5)*recording.Rate)), min(len(left), int((at(q.End)+0.5)*recording.Rate))
	got, err := sphinx.Choose(context.Background(), left[from:to], []string{qOpen, qDeliver, qRooms, qBye})
	if err != nil {
		t.Fatal(err)
	}
	if got != sphinxWords(qOpen) {
		t.Errorf("pocketsphinx hears %q on the caller's channel, want %q", got, sphinxWords(qOpen))
	}
}

// span is the stretch from the first sound that starts in [from, to) to the end of the
// last one: one utterance heard as several sounds (its pauses).
func span(sounds []callerbot.Sound, from, to time.Time) callerbot.Sound {
	var out callerbot.Sound
	for _, s := range sounds {
		if s.Start.Before(from) || !s.Start.Before(to) {
			continue
		}
		if out.Start.IsZero() {
			out.Start = s.Start
		}
		out.End = s.End
	}
	return out
}
