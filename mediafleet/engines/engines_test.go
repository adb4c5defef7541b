package engines

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/stt"
)

// TestFromEnv: with nothing configured the local engines load, and together they hear a
// spoken question: the VAD finds the speech, the recogniser the words.
func TestFromEnv(t *testing.T) {
	for _, k := range []string{"STT_BASE_URL", "TTS_BASE_URL", "ONNXRUNTIME_LIB", "PERSONA_VAD_MODEL", "PERSONA_STT_DECODERS"} {
		t.Setenv(k, "")
	}
	t.Setenv("PERSONA_STT_DECODERS", "1")
	e, err := FromEnv(os.Getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, ok := e.Recognizer.(*stt.Sphinx); !ok {
		t.Fatalf("recognizer %T, want the local pocketsphinx", e.Recognizer)
	}
	pcm, err := e.Voices.Synthesizer("flite-rms").Synthesize(context.Background(), "Do you have any rooms available this weekend?")
	if err != nil {
		t.Fatal(err)
	}
	speech := speechtest.Concat(speechtest.Silence(8000), pcm.Samples, speechtest.Silence(8000))

	v, err := e.NewVAD()
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	tr, err := e.Recognizer.NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Begin(); err != nil {
		t.Fatal(err)
	}
	voiced := 0
	for i := 0; i+v.WindowSize() <= len(speech); i += v.WindowSize() {
		w := speech[i : i+v.WindowSize()]
		p, err := v.Prob(w)
		if err != nil {
			t.Fatal(err)
		}
		if p >= 0.5 {
			voiced++
		}
		if err := tr.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	text, err := tr.End(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if voiced == 0 || !strings.Contains(text, "rooms available") {
		t.Errorf("%d voiced windows, heard %q; want speech and the words", voiced, text)
	}
}

func TestFromEnvHostedRecognizer(t *testing.T) {
	t.Setenv("STT_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("TTS_BASE_URL", "")
	e, err := FromEnv(os.Getenv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, ok := e.Recognizer.(*stt.Hosted); !ok {
		t.Errorf("recognizer %T with STT_BASE_URL set, want the hosted one", e.Recognizer)
	}
	t.Setenv("STT_BASE_URL", "not a url")
	if _, err := FromEnv(os.Getenv, nil); err == nil {
		t.Error("FromEnv with a bad STT_BASE_URL succeeded")
	}
}
