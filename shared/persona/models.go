package persona

import (
	"fmt"
	"slices"
	"strings"
)

// MaxModelLen bounds a model's name, in characters (a version's model, LLM_MODELS).
const MaxModelLen = 128

// ModelNameProblem says why m is not a model name as OpenAI-compatible servers spell
// them ("gpt-4o-mini", "llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct"): letters,
// digits and . _ - : / @ +, at most MaxModelLen characters; "" for a name. The name goes
// into the worker's requests, so nothing else (spaces, quotes, control characters) is
// let through.
func ModelNameProblem(m string) string {
	if len(m) > MaxModelLen {
		return fmt.Sprintf("must be at most %d characters", MaxModelLen)
	}
	if m == "" || strings.IndexFunc(m, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/@+", r))
	}) >= 0 {
		return "must be letters, digits and . _ - : / @ + only"
	}
	return ""
}

// ParseModels reads LLM_MODELS: the comma-separated names of the language models the
// operator lets a version name beside the fleet's default (LLM_MODEL), so that a
// customer cannot point calls at any model the operator's key reaches (the priciest, a
// private fine-tune). Blank entries and repeats are skipped; an empty list lets a version
// name no model at all (every call runs on LLM_MODEL).
func ParseModels(list string) ([]string, error) { return parseModels("LLM_MODELS", list) }

// parseModels reads a variable's comma-separated model names.
func parseModels(variable, list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		if p := ModelNameProblem(n); p != "" {
			return nil, fmt.Errorf("%s: %q is not a model name: it %s", variable, n, p)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// ParseVisionModels reads LLM_VISION_MODELS: the comma-separated names of the models of
// offered (LLM_MODELS) that accept images, which a version with vision must name. A name
// LLM_MODELS does not offer is refused: no version could name it.
func ParseVisionModels(list string, offered []string) ([]string, error) {
	names, err := parseModels("LLM_VISION_MODELS", list)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if !slices.Contains(offered, n) {
			return nil, fmt.Errorf("LLM_VISION_MODELS: %q is not in LLM_MODELS, so no version could name it", n)
		}
	}
	return names, nil
}
