package speechtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// KeepTurns wraps a persona worker's recogniser and keeps every caller turn's audio, as
// the recogniser got it, in a WAV file: in $TURN_AUDIO_DIR when set, else in the test's
// temporary folder. A failing test (or any, with $TURN_AUDIO_DIR) logs the files and
// what was recognised in each, so what the recogniser heard can be listened to and
// recognised again.
func KeepTurns(t testing.TB, r speech.Recognizer) speech.Recognizer {
	dir := os.Getenv("TURN_AUDIO_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else {
		dir = filepath.Join(dir, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixMilli()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	k := &keptTurns{Recognizer: r, t: t, dir: dir}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("TURN_AUDIO_DIR") != "" {
			k.mu.Lock()
			defer k.mu.Unlock()
			for _, f := range k.files {
				t.Logf("the recogniser's audio of a caller turn: %s", f)
			}
		}
	})
	return k
}

type keptTurns struct {
	speech.Recognizer
	t   testing.TB
	dir string

	mu    sync.Mutex
	files []string
}

func (k *keptTurns) NewTranscriber(ctx context.Context) (speech.Transcriber, error) {
	return k.NewTranscriberIn(ctx, "")
}

// NewTranscriberIn asks the recogniser for the call's language when it hears more than
// one (speech.Multilingual).
func (k *keptTurns) NewTranscriberIn(ctx context.Context, language string) (speech.Transcriber, error) {
	tr, err := speech.NewTranscriber(ctx, k.Recognizer, language)
	if err != nil {
		return nil, err
	}
	kt := &keptTranscriber{Transcriber: tr, k: k}
	if ic, ok := tr.(speech.InterimCatcher); ok {
		// A wrapper that hid CatchUp would have the conversation weigh pauses on words
		// read at intervals, unlike the worker it stands in for.
		return catchingKept{interimKept{kt, ic}, ic}, nil
	}
	if ir, ok := tr.(speech.Interimer); ok {
		return interimKept{kt, ir}, nil
	}
	return kt, nil
}

// keptTranscriber keeps the audio of the open turn and writes it out at End.
type keptTranscriber struct {
	speech.Transcriber
	k   *keptTurns
	pcm []int16
}

func (t *keptTranscriber) Begin() error {
	t.pcm = t.pcm[:0]
	return t.Transcriber.Begin()
}

func (t *keptTranscriber) Write(pcm []int16) error {
	t.pcm = append(t.pcm, pcm...)
	return t.Transcriber.Write(pcm)
}

func (t *keptTranscriber) End(ctx context.Context) (string, error) {
	text, err := t.Transcriber.End(ctx)
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	f := filepath.Join(t.k.dir, fmt.Sprintf("turn%d.wav", len(t.k.files)+1))
	if werr := os.WriteFile(f, tts.EncodeWAV(tts.PCM{Rate: speech.Rate, Samples: t.pcm}), 0o644); werr == nil {
		t.k.files = append(t.k.files, fmt.Sprintf("%s (%q)", f, text))
	}
	return text, err
}

type interimKept struct {
	*keptTranscriber
	ir speech.Interimer
}

func (i interimKept) Interim() string { return i.ir.Interim() }

type catchingKept struct {
	interimKept
	ic speech.InterimCatcher
}

func (c catchingKept) CatchUp() { c.ic.CatchUp() }
