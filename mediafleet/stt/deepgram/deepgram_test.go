package deepgram_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
)

const key = "dg-test-key"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// tone is d of loud audio: speech to the fake.
func tone(d time.Duration) []int16 {
	pcm := make([]int16, int(d.Seconds()*speech.Rate))
	for i := range pcm {
		pcm[i] = 2000
		if i%2 == 1 {
			pcm[i] = -2000
		}
	}
	return pcm
}

// silence is d of quiet audio.
func silence(d time.Duration) []int16 { return make([]int16, int(d.Seconds()*speech.Rate)) }

// write sends pcm in 32 ms windows, as the conversation does, a window's time apart
// (on the simulated clock inside a bubble, on the real one outside).
func write(t *testing.T, tr speech.Transcriber, pcm []int16, paced bool) {
	t.Helper()
	for len(pcm) > 0 {
		n := min(512, len(pcm))
		if err := tr.Write(pcm[:n]); err != nil {
			t.Fatal(err)
		}
		pcm = pcm[n:]
		if paced {
			time.Sleep(32 * time.Millisecond)
		}
	}
}

func newRecognizer(t *testing.T, srv *deepgramtest.Server, mod func(*deepgram.Config)) *deepgram.Recognizer {
	t.Helper()
	cfg := deepgram.Config{APIKey: key, BaseURL: srv.URL(), Dialer: srv.Dialer(), Log: quiet}
	if mod != nil {
		mod(&cfg)
	}
	r, err := deepgram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newTranscriber(t *testing.T, r *deepgram.Recognizer) speech.Transcriber {
	t.Helper()
	tr, err := r.NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func end(t *testing.T, tr speech.Transcriber) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text, err := tr.End(ctx)
	if err != nil {
		t.Fatalf("End: %v", err)
	}
	return text
}

// TestStream: over a real socket, a call's turns on one connection with the query
// parameters and the key Deepgram wants; interim words while the caller speaks; each
// turn's text after its Finalize; CloseStream when the call ends.
func TestStream(t *testing.T) {
	srv := deepgramtest.New(deepgramtest.Config{Key: key, InterimEvery: 250 * time.Millisecond, FinalizeDelay: 20 * time.Millisecond})
	defer srv.Close()
	srv.Script("what time do you open tomorrow", "thank you")
	r := newRecognizer(t, srv, func(c *deepgram.Config) {
		c.Query = url.Values{"smart_format": {"true"}}
		c.Model = "nova-2-phonecall"
	})
	tr := newTranscriber(t, r)

	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	write(t, tr, silence(256*time.Millisecond), false) // the padding before onset
	write(t, tr, tone(1500*time.Millisecond), true)
	var interim string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && interim == ""; time.Sleep(10 * time.Millisecond) {
		interim = tr.(speech.Interimer).Interim()
	}
	if interim == "" || !strings.HasPrefix("what time do you open tomorrow", interim) {
		t.Errorf("Interim while speaking = %q, want the first words of the turn", interim)
	}
	write(t, tr, silence(400*time.Millisecond), false)
	if got := end(t, tr); got != "what time do you open tomorrow" {
		t.Errorf("first turn = %q", got)
	}
	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	write(t, tr, tone(600*time.Millisecond), false)
	write(t, tr, silence(400*time.Millisecond), false)
	if got := end(t, tr); got != "thank you" {
		t.Errorf("second turn = %q", got)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}

	recv := srv.Received()
	if len(recv) != 1 {
		t.Fatalf("%d connections, want one for the whole call", len(recv))
	}
	c := recv[0]
	for k, want := range map[string]string{"encoding": "linear16", "sample_rate": "16000", "channels": "1",
		"interim_results": "true", "model": "nova-2-phonecall", "language": "en", "smart_format": "true"} {
		if c.Query[k] != want {
			t.Errorf("query %s = %q, want %q", k, c.Query[k], want)
		}
	}
	want := int((256*time.Millisecond + 1500*time.Millisecond + 400*time.Millisecond + 600*time.Millisecond + 400*time.Millisecond).Seconds() * speech.Rate)
	if c.Auth != "Token "+key || c.Samples != want || c.Finalizes != 2 || c.Closes != 1 {
		t.Errorf("the service got auth %q, %d samples, %d Finalize, %d CloseStream; want the key, %d, 2, 1", c.Auth, c.Samples, c.Finalizes, c.Closes, want)
	}
}

// TestFinalTextComesWithTheFinalize: on the simulated clock, End returns the turn's text
// exactly when the service's final result comes: its own delay after the Finalize,
// nothing added. When the service's endpointing finalised the whole turn already, End
// does not wait for a Finalize answer at all.
func TestFinalTextComesWithTheFinalize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 80 * time.Millisecond
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: delay})
		defer srv.Close()
		srv.Script("do you deliver", "and on sundays")
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()

		tr.Begin()
		write(t, tr, tone(time.Second), true)
		write(t, tr, silence(400*time.Millisecond), true)
		synctest.Wait()
		start := time.Now()
		if got := end(t, tr); got != "do you deliver" {
			t.Errorf("End = %q", got)
		}
		if took := time.Since(start); took != delay {
			t.Errorf("End took %v, want the service's own %v", took, delay)
		}

		// The service's own endpointing gives the final result 300 ms into the silence:
		// all the audio is final when the turn ends.
		srv.SetConfig(func(c *deepgramtest.Config) { c.Endpointing = 300 * time.Millisecond })
		tr.Begin()
		write(t, tr, tone(time.Second), true)
		write(t, tr, silence(300*time.Millisecond), true)
		synctest.Wait()
		start = time.Now()
		if got := end(t, tr); got != "and on sundays" {
			t.Errorf("End after the service's endpoint = %q", got)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("End after the service's endpoint took %v, want no wait", took)
		}
		synctest.Wait() // whatever End set the sender to do is done
		if f := srv.Received()[0].Finalizes; f != 1 {
			t.Errorf("%d Finalize messages, want 1 (none for the turn already final)", f)
		}
	})
}

// TestKeepAliveBetweenTurns: a caller who listens for 25 s sends no audio; KeepAlive
// messages keep the stream open past the service's 10 s idle timeout, and the next turn
// goes on the same connection.
func TestKeepAliveBetweenTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: 50 * time.Millisecond})
		defer srv.Close()
		srv.Script("hello", "still there")
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()
		for i, want := range []string{"hello", "still there"} {
			if i > 0 {
				time.Sleep(25 * time.Second)
			}
			tr.Begin()
			write(t, tr, tone(500*time.Millisecond), true)
			write(t, tr, silence(400*time.Millisecond), true)
			if got := end(t, tr); got != want {
				t.Errorf("turn %d = %q, want %q", i, got, want)
			}
		}
		recv := srv.Received()
		if len(recv) != 1 || recv[0].KeepAlives < 5 {
			t.Errorf("%d connections, %d KeepAlive; want 1 connection kept with a KeepAlive every 4 s of 25", len(recv), recv[0].KeepAlives)
		}
	})
}

// TestReconnectKeepsTheTurn: the connection drops in the middle of a caller's turn. The
// transcriber dials again and sends again the turn's audio that no final result covers
// (here: after its first stretch, which the service's endpointing finalised before the
// drop); the turn's text is whole.
func TestReconnectKeepsTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: 50 * time.Millisecond, Endpointing: 200 * time.Millisecond})
		defer srv.Close()
		srv.Script("i would like", "two dozen roses")
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()

		tr.Begin()
		first := append(tone(800*time.Millisecond), silence(200*time.Millisecond)...)
		write(t, tr, first, true) // final result "i would like" from the endpointing
		write(t, tr, tone(400*time.Millisecond), true)
		synctest.Wait()
		srv.DropAll()
		write(t, tr, tone(600*time.Millisecond), true)
		write(t, tr, silence(150*time.Millisecond), true)
		if got := end(t, tr); got != "i would like two dozen roses" {
			t.Errorf("turn across the drop = %q", got)
		}
		recv := srv.Received()
		if len(recv) != 2 {
			t.Fatalf("%d connections, want 2", len(recv))
		}
		resent := int((400*time.Millisecond + 600*time.Millisecond + 150*time.Millisecond).Seconds() * speech.Rate)
		if recv[1].Samples != resent {
			t.Errorf("the second connection got %d samples, want the %d after the first final result", recv[1].Samples, resent)
		}
	})
}

// scripted is a fallback recogniser (pocketsphinx's place) that records the audio of
// each turn it gets.
type scripted struct {
	mu    sync.Mutex
	text  string
	turns [][]int16
}

func (s *scripted) NewTranscriber(context.Context) (speech.Transcriber, error) { return s, nil }
func (s *scripted) Begin() error {
	s.mu.Lock()
	s.turns = append(s.turns, nil)
	s.mu.Unlock()
	return nil
}
func (s *scripted) Write(pcm []int16) error {
	s.mu.Lock()
	s.turns[len(s.turns)-1] = append(s.turns[len(s.turns)-1], pcm...)
	s.mu.Unlock()
	return nil
}
func (s *scripted) End(context.Context) (string, error) { return s.text, nil }
func (s *scripted) Abort()                              {}
func (s *scripted) Close() error                        { return nil }

// TestDownFallsBack: while the service refuses connections (or the key), each turn's
// whole audio goes to the fallback at once; without a fallback End fails (the
// conversation apologises). Once the service is back, turns go to it again.
func TestDownFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, Down: true, FinalizeDelay: 50 * time.Millisecond})
		defer srv.Close()
		fb := &scripted{text: "from the fallback"}
		tr := newTranscriber(t, newRecognizer(t, srv, func(c *deepgram.Config) { c.Fallback = fb }))
		defer tr.Close()
		turn := append(tone(700*time.Millisecond), silence(400*time.Millisecond)...)

		synctest.Wait()
		tr.Begin()
		write(t, tr, turn, true)
		start := time.Now()
		if got := end(t, tr); got != "from the fallback" {
			t.Errorf("turn while down = %q, want the fallback's", got)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("End while down took %v, want no wait for a service known to be down", took)
		}
		if len(fb.turns) != 1 || len(fb.turns[0]) != len(turn) {
			t.Fatalf("the fallback got %d turns, want the whole turn's %d samples", len(fb.turns), len(turn))
		}

		srv.SetConfig(func(c *deepgramtest.Config) { c.Down = false })
		srv.Script("back again")
		time.Sleep(6 * time.Second) // past the longest backoff
		tr.Begin()
		write(t, tr, turn, true)
		if got := end(t, tr); got != "back again" {
			t.Errorf("turn after the service came back = %q", got)
		}
	})

	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: "another key"})
		defer srv.Close()
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()
		synctest.Wait()
		tr.Begin()
		write(t, tr, tone(500*time.Millisecond), true)
		_, err := tr.End(context.Background())
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("End with a refused key and no fallback = %v, want the service's 401", err)
		}
	})
}

// TestUnansweredFinalize: a service that has the whole turn but never answers its
// Finalize: past FinalizeTimeout the words so far (final and interim) are the text.
func TestUnansweredFinalize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, InterimEvery: 200 * time.Millisecond, FinalizeDelay: time.Hour})
		defer srv.Close()
		srv.Script("can i pay by card")
		tr := newTranscriber(t, newRecognizer(t, srv, func(c *deepgram.Config) { c.FinalizeTimeout = 300 * time.Millisecond }))
		defer tr.Close()
		tr.Begin()
		write(t, tr, tone(2*time.Second), true)
		write(t, tr, silence(400*time.Millisecond), true)
		start := time.Now()
		if got := end(t, tr); got != "can i pay by card" {
			t.Errorf("End without a final result = %q, want the interim words", got)
		}
		if took := time.Since(start); took != 300*time.Millisecond {
			t.Errorf("End took %v, want the finalize timeout", took)
		}
	})
}

// TestAbortAndLateResults: a turn aborted, and a Finalize answered after its turn ended,
// leave nothing in the next turn.
func TestAbortAndLateResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, InterimEvery: 100 * time.Millisecond, FinalizeDelay: 400 * time.Millisecond})
		defer srv.Close()
		srv.Script("late words", "the real question")
		tr := newTranscriber(t, newRecognizer(t, srv, func(c *deepgram.Config) { c.FinalizeTimeout = 100 * time.Millisecond }))
		defer tr.Close()
		tr.Begin()
		write(t, tr, tone(500*time.Millisecond), true)
		end(t, tr) // gives up at 100 ms; the final result comes 300 ms later
		tr.Begin()
		write(t, tr, silence(300*time.Millisecond), true)
		if got := tr.(speech.Interimer).Interim(); got != "" {
			t.Errorf("Interim of the next turn = %q, want nothing of the last one", got)
		}
		tr.Abort()
		srv.SetConfig(func(c *deepgramtest.Config) { c.FinalizeDelay = 20 * time.Millisecond })
		tr.Begin()
		write(t, tr, tone(500*time.Millisecond), true)
		if got := end(t, tr); got != "the real question" {
			t.Errorf("turn after a late result and an abort = %q", got)
		}
	})
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  deepgram.Config
		want string // in the error; "" for none
	}{
		{"Deepgram's API needs a key", deepgram.Config{}, "DEEPGRAM_API_KEY"},
		{"a self-hosted server may take none", deepgram.Config{BaseURL: "http://127.0.0.1:8080"}, ""},
		{"a key", deepgram.Config{APIKey: "k"}, ""},
		{"not a URL", deepgram.Config{BaseURL: "127.0.0.1:8080"}, "not a URL"},
		{"another scheme", deepgram.Config{BaseURL: "ftp://example.com"}, "want ws"},
		{"the client's own parameters", deepgram.Config{APIKey: "k", Query: url.Values{"encoding": {"opus"}}}, "may not set encoding"},
		{"a keep-alive the service times out first", deepgram.Config{APIKey: "k", KeepAlive: 10 * time.Second}, "idle for 10 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deepgram.New(tc.cfg)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
	r, err := deepgram.New(deepgram.Config{APIKey: "k", BaseURL: "https://dg.example.com/base/"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(r.URL())
	if u.Scheme != "wss" || u.Host != "dg.example.com" || u.Path != "/base/v1/listen" || u.Query().Get("model") != deepgram.DefaultModel ||
		u.Query().Get("punctuate") != "true" {
		t.Errorf("URL = %s, want wss://dg.example.com/base/v1/listen with the default model, punctuated", r.URL())
	}
	if r, err := deepgram.New(deepgram.Config{APIKey: "k", Query: url.Values{"punctuate": {"false"}}}); err != nil || !strings.Contains(r.URL(), "punctuate=false") {
		t.Errorf("New with punctuate=false: %v, URL %s; want the customer's choice kept", err, r.URL())
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("unreachable")
	}
}

// TestFlushInAPause: the conversation flushes in the caller's pause (speech.Flusher),
// and the caller goes on. The service finalises the words so far at once (a Finalize,
// answered during the pause or after more speech), the stream goes on, and the turn's
// text is every final result of it in order: no word lost, none twice.
func TestFlushInAPause(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration // the service's, from a Finalize to its answer
		pause time.Duration // silence after the Flush before the caller goes on
	}{
		{"answered in the pause", 80 * time.Millisecond, 200 * time.Millisecond},
		{"answered after more speech", 400 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: tc.delay, InterimEvery: 100 * time.Millisecond})
				defer srv.Close()
				srv.Script("i would like", "two dozen roses")
				tr := newTranscriber(t, newRecognizer(t, srv, nil))
				defer tr.Close()

				tr.Begin()
				write(t, tr, tone(800*time.Millisecond), true)
				write(t, tr, silence(200*time.Millisecond), true)
				if err := tr.(speech.Flusher).Flush(); err != nil {
					t.Fatal(err)
				}
				write(t, tr, silence(tc.pause), true)
				write(t, tr, tone(600*time.Millisecond), true)
				synctest.Wait()
				if got := tr.(speech.Interimer).Interim(); !strings.HasPrefix(got, "i would like ") {
					t.Errorf("Interim after more speech = %q, want the flushed words then the new ones", got)
				}
				write(t, tr, silence(400*time.Millisecond), true)
				if got := end(t, tr); got != "i would like two dozen roses" {
					t.Errorf("turn with a Flush in its pause = %q", got)
				}
				synctest.Wait()
				recv := srv.Received()
				if len(recv) != 1 || recv[0].Finalizes != 2 || len(recv[0].FinalSent) != 2 {
					t.Errorf("%d connections; want 1 with 2 Finalize answered (the Flush's, End's): %+v", len(recv), recv)
				}
			})
		})
	}
}

// TestEndRightAfterFlush: the pause the conversation flushed in ends the turn, with no
// audio written after the Flush (the conversation holds the pause's later windows).
// End sends no second Finalize: once the Flush's answer is in it returns at once, and
// while it is on its way End waits only for the rest of the service's delay.
func TestEndRightAfterFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 150 * time.Millisecond
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: delay})
		defer srv.Close()
		srv.Script("what time do you open", "do you deliver")
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()
		f := tr.(speech.Flusher)

		// The answer comes 150 ms after the Flush; the turn ends 200 ms after it.
		tr.Begin()
		write(t, tr, tone(time.Second), true)
		write(t, tr, silence(224*time.Millisecond), true)
		f.Flush()
		time.Sleep(192 * time.Millisecond)
		start := time.Now()
		if got := end(t, tr); got != "what time do you open" {
			t.Errorf("End after the Flush's answer = %q", got)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("End after the Flush's answer took %v, want no wait", took)
		}

		// The turn ends 50 ms after the Flush: End waits the 100 ms left of its delay.
		tr.Begin()
		write(t, tr, tone(time.Second), true)
		write(t, tr, silence(224*time.Millisecond), true)
		f.Flush()
		time.Sleep(50 * time.Millisecond)
		start = time.Now()
		if got := end(t, tr); got != "do you deliver" {
			t.Errorf("End before the Flush's answer = %q", got)
		}
		if took := time.Since(start); took != delay-50*time.Millisecond {
			t.Errorf("End before the Flush's answer took %v, want the %v left of the service's delay", took, delay-50*time.Millisecond)
		}
		synctest.Wait()
		if n := srv.Received()[0].Finalizes; n != 2 {
			t.Errorf("%d Finalize messages, want 2: one per turn, the Flush's", n)
		}
	})
}

// TestDropAfterFlush: the socket drops between the Flush and the end of the turn.
// Whether the Flush's answer came before the drop or not, the turn's words are all
// there, once: the transcriber sends again the audio no final result covers (and the
// Finalize the Flush asked for), and with the service gone the fallback gets the
// whole turn.
func TestDropAfterFlush(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answered bool // the Flush's answer came before the drop
	}{{"answer in before the drop", true}, {"answer lost in the drop", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: 100 * time.Millisecond})
				defer srv.Close()
				if !tc.answered {
					// The fake takes the flushed words off its script when it gets the
					// Finalize; the new connection's service hears them again.
					srv.Script("i would like")
				}
				srv.Script("i would like", "two dozen roses")
				tr := newTranscriber(t, newRecognizer(t, srv, nil))
				defer tr.Close()
				tr.Begin()
				write(t, tr, tone(800*time.Millisecond), true)
				write(t, tr, silence(200*time.Millisecond), true)
				tr.(speech.Flusher).Flush()
				if tc.answered {
					time.Sleep(150 * time.Millisecond)
				} else {
					time.Sleep(50 * time.Millisecond)
				}
				synctest.Wait()
				srv.DropAll()
				write(t, tr, tone(600*time.Millisecond), true)
				write(t, tr, silence(400*time.Millisecond), true)
				if got := end(t, tr); got != "i would like two dozen roses" {
					t.Errorf("turn across a drop after a Flush = %q", got)
				}
				recv := srv.Received()
				if len(recv) != 2 {
					t.Fatalf("%d connections, want 2", len(recv))
				}
				resent := int((600*time.Millisecond + 400*time.Millisecond).Seconds() * speech.Rate)
				if !tc.answered {
					resent += int((800*time.Millisecond + 200*time.Millisecond).Seconds() * speech.Rate)
				}
				if recv[1].Samples != resent {
					t.Errorf("the second connection got %d samples, want the %d no final result covered", recv[1].Samples, resent)
				}
			})
		})
	}

	// The service goes down after the Flush was answered: the fallback gets the whole
	// turn's audio, not the part after the Flush, and its text is the turn's.
	synctest.Test(t, func(t *testing.T) {
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: 50 * time.Millisecond})
		defer srv.Close()
		srv.Script("i would like")
		fb := &scripted{text: "i would like two dozen roses"}
		tr := newTranscriber(t, newRecognizer(t, srv, func(c *deepgram.Config) { c.Fallback = fb }))
		defer tr.Close()
		tr.Begin()
		write(t, tr, tone(800*time.Millisecond), true)
		write(t, tr, silence(200*time.Millisecond), true)
		tr.(speech.Flusher).Flush()
		time.Sleep(100 * time.Millisecond)
		srv.SetConfig(func(c *deepgramtest.Config) { c.Down = true })
		srv.DropAll()
		write(t, tr, tone(600*time.Millisecond), true)
		write(t, tr, silence(400*time.Millisecond), true)
		synctest.Wait()
		if got := end(t, tr); got != "i would like two dozen roses" {
			t.Errorf("turn with the service down after a Flush = %q, want the fallback's", got)
		}
		whole := int((800*time.Millisecond + 200*time.Millisecond + 600*time.Millisecond + 400*time.Millisecond).Seconds() * speech.Rate)
		if len(fb.turns) != 1 || len(fb.turns[0]) != whole {
			t.Errorf("the fallback got %d turns, want the whole turn's %d samples", len(fb.turns), whole)
		}
	})
}

// TestUnansweredFlush: the service's endpointing finalised the words just before the
// Flush, so its Finalize has nothing left to answer (Deepgram promises no answer then).
// The caller goes on; End waits for its own Finalize's answer only, not for the
// finalize timeout.
func TestUnansweredFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 80 * time.Millisecond
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: key, FinalizeDelay: delay, Endpointing: 192 * time.Millisecond})
		defer srv.Close()
		srv.Script("i would like", "two dozen roses")
		tr := newTranscriber(t, newRecognizer(t, srv, nil))
		defer tr.Close()
		tr.Begin()
		write(t, tr, tone(800*time.Millisecond), true)
		write(t, tr, silence(192*time.Millisecond), true) // the endpointing's final result
		synctest.Wait()
		tr.(speech.Flusher).Flush()
		synctest.Wait() // the Finalize is out before the caller goes on
		write(t, tr, tone(608*time.Millisecond), true)
		write(t, tr, silence(96*time.Millisecond), true)
		start := time.Now()
		if got := end(t, tr); got != "i would like two dozen roses" {
			t.Errorf("turn = %q", got)
		}
		if took := time.Since(start); took != delay {
			t.Errorf("End took %v, want the service's %v for its own Finalize", took, delay)
		}
		synctest.Wait()
		if r := srv.Received()[0]; r.Finalizes != 2 || len(r.FinalSent) != 1 {
			t.Errorf("%d Finalize, %d answered; want 2, 1 (the Flush's had nothing left)", r.Finalizes, len(r.FinalSent))
		}
	})
}

// TestLanguagePerCall: a call's transcriber asks the service for the call's language
// (the version's, speech.Multilingual) in the language query parameter, and gets that
// language's words; "" and the bare primary language of the configured one take the
// configured variant. The English fallback does not transcribe a call in another
// language: with the service down such a turn fails (the conversation apologises).
func TestLanguagePerCall(t *testing.T) {
	srv := deepgramtest.New(deepgramtest.Config{Key: key, FinalizeDelay: 20 * time.Millisecond, Languages: []string{"es", "en-GB"}})
	defer srv.Close()
	fb := &scripted{text: "from the fallback"}
	r := newRecognizer(t, srv, func(c *deepgram.Config) { c.Language, c.Fallback = "en-GB", fb })
	for in, want := range map[string]string{"": "en-GB", "en": "en-GB", "EN": "en-GB", "en-US": "en-US", "es": "es", "es-MX": "es-MX"} {
		if got := r.Language(in); got != want {
			t.Errorf("Language(%q) = %q, want %q", in, got, want)
		}
	}
	turn := append(tone(600*time.Millisecond), silence(400*time.Millisecond)...)
	hear := func(language, said string) string {
		t.Helper()
		srv.Script(said)
		tr, err := r.NewTranscriberIn(context.Background(), language)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := tr.Begin(); err != nil {
			t.Fatal(err)
		}
		write(t, tr, turn, true)
		return end(t, tr)
	}
	if got := hear("es", "¿A qué hora abren mañana?"); got != "¿A qué hora abren mañana?" {
		t.Errorf("a Spanish call heard %q, want the service's Spanish words", got)
	}
	if got := hear("en", "what time do you open"); got != "what time do you open" {
		t.Errorf("an English call heard %q, want the service's words", got)
	}
	recv := srv.Received()
	if len(recv) != 2 || recv[0].Query["language"] != "es" || recv[1].Query["language"] != "en-GB" {
		t.Fatalf("the service got %+v; want a connection with language=es, then one with en-GB", recv)
	}
	if len(fb.turns) != 0 {
		t.Errorf("the fallback transcribed %d turns of a service that was up", len(fb.turns))
	}

	srv.SetConfig(func(c *deepgramtest.Config) { c.Down = true })
	tr, err := r.NewTranscriberIn(context.Background(), "es")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.Begin()
	write(t, tr, turn, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if text, err := tr.End(ctx); err == nil {
		t.Errorf("a Spanish turn with the service down = %q, nil; want an error, not the English fallback's words", text)
	}
	if len(fb.turns) != 0 {
		t.Errorf("the English fallback got %d turns of a Spanish call", len(fb.turns))
	}
}
