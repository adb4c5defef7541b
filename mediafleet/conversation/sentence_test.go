package conversation

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitter(t *testing.T) {
	tests := []struct {
		name   string
		tokens []string
		maxLen int
		want   []string
	}{
		{
			name:   "sentences as they complete",
			tokens: []string{"Hello", " there", ".", " How", " can", " I", " help", "?", " Bye", "!"},
			want:   []string{"Hello there.", "How can I help?", "Bye!"},
		},
		{
			name:   "decimals and prices",
			tokens: []string{"It costs $3", ".50 today", ". Version 2.5 is out."},
			want:   []string{"It costs $3.50 today.", "Version 2.5 is out."},
		},
		{
			name:   "abbreviations and initials",
			tokens: []string{"Dr. Smith and Mr. J. Jones will call, e.g. tomorrow at 9 a.m. sharp. Fine?"},
			want:   []string{"Dr. Smith and Mr. J. Jones will call, e.g. tomorrow at 9 a.m. sharp.", "Fine?"},
		},
		{
			name:   "closing quotes stay with the sentence",
			tokens: []string{`He said "yes." Then he left.`},
			want:   []string{`He said "yes."`, "Then he left."},
		},
		{
			name:   "ellipsis and new lines",
			tokens: []string{"Well... let me see.\n- first item\n- second item"},
			want:   []string{"Well...", "let me see.", "- first item", "- second item"},
		},
		{
			name:   "a long clause without punctuation is flushed at a comma",
			tokens: []string{"so what we can do for you today, if you like, is look up the order and then ", "check when it ships"},
			maxLen: 60,
			want:   []string{"so what we can do for you today, if you like,", "is look up the order and then check when it ships"},
		},
		{
			name:   "a long run with no punctuation at all is flushed at a space",
			tokens: []string{strings.Repeat("word ", 20)},
			maxLen: 32,
			want:   []string{"word word word word word word", "word word word word word word", "word word word word word word", "word word"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := splitter{maxLen: tt.maxLen}
			var got []string
			for _, tok := range tt.tokens {
				got = append(got, s.add(tok)...)
			}
			if rest := s.flush(); rest != "" {
				got = append(got, rest)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
