package stt

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
)

// TestDeepgramFromEnv: STT_PROVIDER=deepgram with its variables makes the streaming
// recogniser, with pocketsphinx behind it unless STT_FALLBACK=none; bad values are
// refused with the variable's name.
func TestDeepgramFromEnv(t *testing.T) {
	srv := deepgramtest.New(deepgramtest.Config{Key: "k", FinalizeDelay: 10 * time.Millisecond})
	defer srv.Close()
	srv.Script("hello there")
	t.Setenv("STT_PROVIDER", "deepgram")
	t.Setenv("DEEPGRAM_API_KEY", "k")
	t.Setenv("DEEPGRAM_BASE_URL", srv.URL())
	t.Setenv("DEEPGRAM_MODEL", "nova-2-phonecall")
	t.Setenv("DEEPGRAM_QUERY", "smart_format=true")
	t.Setenv("STT_FALLBACK", "none")
	r, err := FromEnv(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	dg, ok := r.(*deepgram.Recognizer)
	if !ok || !strings.Contains(dg.URL(), "model=nova-2-phonecall") || !strings.Contains(dg.URL(), "smart_format=true") {
		t.Fatalf("FromEnv = %T %v, want the Deepgram recogniser with the model and query", r, r)
	}
	tr, err := r.NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr.Begin()
	stream(t, tr, turn(speechtest.Flite(t, "awb", "Hello there.")))
	if got, err := tr.End(context.Background()); err != nil || got != "hello there" {
		t.Errorf("End = %q, %v; want the service's words", got, err)
	}
	tr.Close()
	r.Close()

	for _, tc := range []struct{ name, value, want string }{
		{"STT_PROVIDER", "whisper.cpp", "STT_PROVIDER"},
		{"STT_FALLBACK", "espeak", "STT_FALLBACK"},
		{"DEEPGRAM_FINALIZE_TIMEOUT", "forever", "DEEPGRAM_FINALIZE_TIMEOUT"},
		{"DEEPGRAM_QUERY", "encoding=opus", "may not set encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			if r, err := FromEnv(os.Getenv); err == nil || !strings.Contains(err.Error(), tc.want) {
				if r != nil {
					r.Close()
				}
				t.Errorf("%s=%s: FromEnv = %v, want an error naming %s", tc.name, tc.value, err, tc.want)
			}
		})
	}
}

// TestDeepgramDownFallsBackToPocketsphinx: with the service down, the caller's turn is
// transcribed by pocketsphinx from the audio the streaming transcriber kept: the words
// are not lost.
func TestDeepgramDownFallsBackToPocketsphinx(t *testing.T) {
	srv := deepgramtest.New(deepgramtest.Config{Key: "k", Down: true})
	defer srv.Close()
	r, err := deepgram.New(deepgram.Config{APIKey: "k", BaseURL: srv.URL(), Fallback: loadSphinx(t)})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	time.Sleep(100 * time.Millisecond) // the first connection attempt is refused
	q := "Is the pharmacy open on Sunday?"
	got := transcribe(t, tr, turn(speechtest.Flite(t, "awb", q)))
	if e := wordErrors(words(q), words(got)); e > 2 {
		t.Errorf("fallback heard %q for %q (%d word errors)", got, q, e)
	}
}
