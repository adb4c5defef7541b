package ident

import (
	"sort"
	"testing"
)

func TestNewSortsByCreation(t *testing.T) {
	ids := make([]string, 5000)
	for i := range ids {
		ids[i] = New("asst")
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids made in sequence do not sort in creation order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if !Valid("asst", id) {
			t.Fatalf("Valid(%q) = false, want true", id)
		}
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		prefix, id string
		want       bool
	}{
		{"line", New("line"), true},
		{"asst", New("line"), false},
		{"asst", "asst_short", false},
		{"asst", "asst_01234567890123456789abcdeU", false},
	} {
		if got := Valid(tc.prefix, tc.id); got != tc.want {
			t.Errorf("Valid(%q, %q) = %v, want %v", tc.prefix, tc.id, got, tc.want)
		}
	}
}
