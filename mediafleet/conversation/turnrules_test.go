package conversation

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestJudge(t *testing.T) {
	en := rulesFor("en-US")
	def := newInterruptRule(nil)
	tuned := newInterruptRule(&persona.Interruption{MinWords: 3, Acknowledgements: []string{"sure thing"}})
	tests := []struct {
		text string
		rule interruptRule
		want verdict
	}{
		{"", def, undecided},
		{"Uh-huh.", def, backchannel},
		{"mm hmm", def, backchannel},
		{"yeah, right", def, backchannel},
		{"all right", def, backchannel},
		{"okay", def, backchannel},
		{"wait", def, cutIn},
		{"yeah hold on", def, cutIn},
		{"okay?", def, cutIn},
		{"how much", def, cutIn},
		{"red ones", def, cutIn},
		{"yeah yeah yeah yeah yeah", def, cutIn},
		{"sure thing", def, cutIn},
		{"sure thing", tuned, backchannel},
		{"those lovely flowers", tuned, cutIn},
		{"lovely flowers", tuned, backchannel},
		{"stop", tuned, cutIn},
	}
	for _, tt := range []struct {
		text string
		want verdict
	}{{"I", undecided}, {"the", undecided}, {"yeah", backchannel}, {"wait", undecided}, {"yeah no", undecided},
		{"what", undecided}, {"no okay", cutIn}, {"wait stop", cutIn}, {"what time", cutIn}, {"red ones", cutIn}, {"yeah bro", undecided}} {
		if got := en.judge(tt.text, def, false); got != tt.want {
			t.Errorf("interim judge(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	for _, tt := range tests {
		if got := en.judge(tt.text, tt.rule, true); got != tt.want {
			t.Errorf("judge(%q, %+v) = %v, want %v", tt.text, tt.rule, got, tt.want)
		}
	}
}

func TestEnding(t *testing.T) {
	en := rulesFor("")
	tests := []struct {
		text string
		want ending
	}{
		{"", unknownEnd},
		{"When do you open?", finished},
		{"I'd like a table for two.", finished},
		{"I'd like to book a", unfinished},
		{"I'd like to book a table and", unfinished},
		{"my number is four one five", unfinished},
		{"my number is 415", unfinished},
		{"my number is 415.", unfinished},
		{"well,", unfinished},
		{"so I was thinking...", unfinished},
		{"a table for two", unknownEnd},
		{"what time do you open", finished},
		{"roses", unknownEnd},
	}
	for _, tt := range tests {
		if got := en.ending(tt.text); got != tt.want {
			t.Errorf("ending(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
