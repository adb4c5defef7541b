package pipeline

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// A call answered by silence (answering-machine detection) runs its conversation with a
// short idle timeout, so a line where nobody is there is hung up soon; a shorter one of
// the version's stands, and any other call keeps the version's.
func TestSilentAnswerShortensIdle(t *testing.T) {
	for _, tc := range []struct {
		version int
		silent  bool
		want    int
	}{{0, true, silentIdle}, {30, true, silentIdle}, {3, true, 3}, {30, false, 30}, {0, false, 0}} {
		var j persona.Job
		j.Version.IdleTimeoutSeconds = tc.version
		c := &call{job: j, silentAnswer: tc.silent}
		if got := (&Call{c: c}).Job().Version.IdleTimeoutSeconds; got != tc.want {
			t.Errorf("version %d, silent %v: idle %d, want %d", tc.version, tc.silent, got, tc.want)
		}
	}
}
