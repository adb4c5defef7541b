package conversation

import (
	"strings"
	"unicode"
)

// splitter cuts a streamed reply into sentences, so each is spoken as soon as it is
// complete rather than after the whole reply.
type splitter struct {
	buf string
	// maxLen flushes a clause that runs this long without a sentence end, so a model that
	// writes one endless sentence still starts speaking.
	maxLen int
}

// abbreviations end with a period that does not end a sentence. "No." is not here: it
// ends sentences far more often than it abbreviates "number".
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true,
	"st": true, "vs": true, "mt": true, "approx": true, "dept": true, "inc": true, "ltd": true,
	"co": true, "corp": true, "jan": true, "feb": true, "mar": true, "apr": true, "jun": true,
	"jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

// add appends streamed text and returns the sentences it completed.
func (s *splitter) add(text string) []string {
	s.buf += text
	var out []string
	for {
		i := sentenceEnd(s.buf)
		if i < 0 && s.maxLen > 0 && len(s.buf) >= s.maxLen {
			i = clauseEnd(s.buf, s.maxLen)
		}
		if i < 0 {
			return out
		}
		if sent := strings.TrimSpace(s.buf[:i]); sent != "" {
			out = append(out, sent)
		}
		s.buf = s.buf[i:]
	}
}

// flush returns what is left (the end of the reply).
func (s *splitter) flush() string {
	rest := strings.TrimSpace(s.buf)
	s.buf = ""
	return rest
}

// sentenceEnd is the index just after the first complete sentence of b (its terminal
// punctuation and closing quotes), or -1. A sentence is complete only once the whitespace
// after it has arrived: "3." may yet become "3.5".
func sentenceEnd(b string) int {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\n' {
			if strings.TrimSpace(b[:i]) != "" {
				return i + 1
			}
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(b) && strings.ContainsRune(".!?\"')]”’", rune(b[j])) {
			j++
		}
		if j >= len(b) || !unicode.IsSpace(rune(b[j])) {
			i = j - 1
			continue
		}
		if c == '.' && j == i+1 && isAbbreviation(b[:i]) {
			continue
		}
		return j
	}
	return -1
}

// isAbbreviation says whether the word just before a period abbreviates: a listed
// abbreviation, an initial ("J."), or a dotted one ("e.g", "a.m").
func isAbbreviation(before string) bool {
	k := strings.LastIndexFunc(before, unicode.IsSpace)
	word := strings.TrimLeft(before[k+1:], "\"'([“‘")
	if word == "" {
		return false
	}
	if len(word) == 1 && unicode.IsUpper(rune(word[0])) {
		return true
	}
	if strings.Contains(word, ".") {
		return true
	}
	return abbreviations[strings.ToLower(word)]
}

// clauseEnd is where to cut a long run without a sentence end: after the last clause
// punctuation (, ; : –) before max, else after the last space.
func clauseEnd(b string, max int) int {
	head := b[:min(max, len(b))]
	for _, p := range []string{", ", "; ", ": ", " - ", " – ", " — "} {
		if k := strings.LastIndex(head, p); k > 0 {
			return k + len(p)
		}
	}
	if k := strings.LastIndexByte(head, ' '); k > 0 {
		return k + 1
	}
	return -1
}
