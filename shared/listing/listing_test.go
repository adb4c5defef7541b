package listing

import (
	"slices"
	"testing"
)

// ids are newest first, as lists are.
var ids = []string{"x_9", "x_8", "x_7", "x_6", "x_5", "x_4", "x_3", "x_2", "x_1"}

func TestSelectAndPageOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		q        Query
		want     []string
		wantMore bool
	}{
		{"first page", Query{Limit: 3}, []string{"x_9", "x_8", "x_7"}, true},
		{"starting_after", Query{Limit: 3, StartingAfter: "x_4"}, []string{"x_3", "x_2", "x_1"}, false},
		{"ending_before nearest the cursor", Query{Limit: 2, EndingBefore: "x_4"}, []string{"x_6", "x_5"}, true},
		{"ending_before at the top", Query{Limit: 3, EndingBefore: "x_6"}, []string{"x_9", "x_8", "x_7"}, false},
		{"created range", Query{Limit: 10, IDFrom: "x_3", IDTo: "x_5"}, []string{"x_5", "x_4", "x_3"}, false},
		{"range and starting_after", Query{Limit: 10, IDFrom: "x_3", IDTo: "x_7", StartingAfter: "x_5"}, []string{"x_4", "x_3"}, false},
		{"range and ending_before", Query{Limit: 1, IDFrom: "x_2", IDTo: "x_7", EndingBefore: "x_3"}, []string{"x_4"}, true},
		{"cursor outside the range", Query{Limit: 10, IDFrom: "x_3", IDTo: "x_4", StartingAfter: "x_8"}, []string{"x_4", "x_3"}, false},
		{"empty range", Query{Limit: 10, IDFrom: "x_5", IDTo: "x_4"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, more := PageOf(Select(ids, func(s string) string { return s }, tc.q), tc.q)
			if !slices.Equal(got, tc.want) || more != tc.wantMore {
				t.Errorf("page = %v, has_more %v; want %v, %v", got, more, tc.want, tc.wantMore)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi Bound
		want   bool
	}{
		{"open", Bound{}, Bound{}, false},
		{"one id inclusive", Bound{"a", true}, Bound{"a", true}, false},
		{"one id exclusive", Bound{"a", false}, Bound{"a", true}, true},
		{"crossed", Bound{"b", true}, Bound{"a", true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Empty(tc.lo, tc.hi); got != tc.want {
				t.Errorf("Empty(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			}
		})
	}
}
