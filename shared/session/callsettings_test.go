package session

import (
	"reflect"
	"testing"

	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestCallSettingsCarryInterruption: a version's interruption settings reach its
// worker, defaults filled in; a version without any sends none (the worker's default).
func TestCallSettingsCarryInterruption(t *testing.T) {
	if got := callSettings(assistant.CallSettings{}).Interruption; got != nil {
		t.Errorf("interruption of a version without any = %+v, want none", got)
	}
	in := &persona.Interruption{Mode: persona.InterruptionOff, Acknowledgements: []string{"gotcha"}}
	got := callSettings(assistant.CallSettings{Interruption: in}).Interruption
	want := &persona.Interruption{Mode: persona.InterruptionOff, MinWords: 1, Acknowledgements: []string{"gotcha"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("interruption = %+v, want %+v", got, want)
	}
}
