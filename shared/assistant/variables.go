package assistant

import (
	"fmt"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// placeholders checks the draft's {{name}} placeholders (their syntax, and at most
// variables.MaxCount distinct names) and returns the names, sorted and never nil. A
// malformed placeholder is a 400 naming its field, on every write of the draft and at
// publish (drafts stored before placeholders were checked reach publish unchecked).
func (d Draft) placeholders() ([]string, error) {
	return variables.CheckFields("greeting", d.Greeting, "system_prompt", d.SystemPrompt)
}

// Rendered is the version's greeting and system prompt with a call's values substituted
// (variables.Render). Values are bounded one by one, but a text may use a placeholder
// many times, so the rendered text is bounded too, by the field's own limit
// (MaxGreetingLen, MaxSystemPromptLen): past it, the texts still come back, with a 400
// parameter_invalid on "variables" naming the field. Callers check where the values are
// first known (a session's create, a call.incoming answer) and refuse them there.
func (v Version) Rendered(values map[string]string) (greeting, systemPrompt string, err error) {
	greeting, systemPrompt = variables.Render(v.Greeting, values), variables.Render(v.SystemPrompt, values)
	for _, f := range []struct {
		name, text string
		max        int
	}{{"greeting", greeting, MaxGreetingLen}, {"system prompt", systemPrompt, MaxSystemPromptLen}} {
		if n := utf8.RuneCountInString(f.text); n > f.max {
			err = apierr.Invalid("variables", fmt.Sprintf("the variables render the %s to %d characters, past its limit of %d; send shorter values",
				f.name, n, f.max))
			break
		}
	}
	return greeting, systemPrompt, err
}

// RenderedWithin is Rendered cut to the field limits: what a worker is given when values
// that were never checked (a line's defaults changed after the version was published)
// would render past them. ok is false when a text was cut.
func (v Version) RenderedWithin(values map[string]string) (greeting, systemPrompt string, ok bool) {
	greeting, systemPrompt, err := v.Rendered(values)
	return cut(greeting, MaxGreetingLen), cut(systemPrompt, MaxSystemPromptLen), err == nil
}

// cut keeps the first max characters of s.
func cut(s string, max int) string {
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}
