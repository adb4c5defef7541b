package assistant

import "github.com/bridgeline/bridgeline/shared/variables"

// placeholders checks the draft's {{name}} placeholders (their syntax, and at most
// variables.MaxCount distinct names) and returns the names, sorted and never nil. A
// malformed placeholder is a 400 naming its field, on every write of the draft and at
// publish (drafts stored before placeholders were checked reach publish unchecked).
func (d Draft) placeholders() ([]string, error) {
	return variables.CheckFields("greeting", d.Greeting, "system_prompt", d.SystemPrompt)
}
