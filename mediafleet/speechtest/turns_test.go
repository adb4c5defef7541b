package speechtest

import (
	"context"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// catcher is a transcriber with interim words it can catch up (as pocketsphinx's).
type catcher struct{ caught int }

func (c *catcher) Begin() error                                               { return nil }
func (c *catcher) Write([]int16) error                                        { return nil }
func (c *catcher) End(context.Context) (string, error)                        { return "", nil }
func (c *catcher) Abort()                                                     {}
func (c *catcher) Close() error                                               { return nil }
func (c *catcher) Interim() string                                            { return "" }
func (c *catcher) CatchUp()                                                   { c.caught++ }
func (c *catcher) NewTranscriber(context.Context) (speech.Transcriber, error) { return c, nil }

// TestKeepTurnsKeepsCatchUp: the wrapper the example tests put around the worker's
// recogniser passes CatchUp through, so their conversations weigh a pause as the
// worker's do.
func TestKeepTurnsKeepsCatchUp(t *testing.T) {
	c := &catcher{}
	tr, err := KeepTurns(t, c).NewTranscriber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ic, ok := tr.(speech.InterimCatcher)
	if !ok {
		t.Fatalf("KeepTurns' transcriber %T hides CatchUp", tr)
	}
	ic.CatchUp()
	if c.caught != 1 {
		t.Errorf("CatchUp reached the recogniser %d times, want 1", c.caught)
	}
}
