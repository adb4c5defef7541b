package httpapi_test

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/listing"
)

func TestNewBoundedList(t *testing.T) {
	big := strings.Repeat("x", httpapi.MaxListBytes/3) // three fit, the fourth passes the budget
	tests := []struct {
		name     string
		items    []string
		q        listing.Query
		wantLen  int
		wantMore bool
		wantHead string // the first item kept
	}{
		{"small items: the limit decides", []string{"a", "b", "c"}, listing.Query{Limit: 2}, 2, true, "a"},
		{"small items, all fit", []string{"a", "b"}, listing.Query{Limit: 5}, 2, false, "a"},
		{"large items end the page early", []string{big, big, big, big, big}, listing.Query{Limit: 5}, 2, true, big},
		{"one item over the budget still goes out", []string{big + big + big + big}, listing.Query{Limit: 5}, 1, false, big + big + big + big},
		// ending_before: the one too many is the newest (first), and a page cut by size
		// keeps the items nearest the cursor (the last).
		{"ending_before: the limit decides", []string{"a", "b", "c"}, listing.Query{Limit: 2, EndingBefore: "x_1"}, 2, true, "b"},
		{"ending_before: large items keep the oldest", []string{"a", big, big, big, "z"}, listing.Query{Limit: 5, EndingBefore: "x_1"}, 3, true, big},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := httpapi.NewBoundedList(tc.items, tc.q, func(s string) string { return s })
			if len(got.Data) != tc.wantLen || got.HasMore != tc.wantMore {
				t.Errorf("NewBoundedList = %d items, has_more %v; want %d, %v", len(got.Data), got.HasMore, tc.wantLen, tc.wantMore)
			}
			if len(got.Data) > 0 && got.Data[0] != tc.wantHead {
				t.Errorf("NewBoundedList first item = %.10q, want %.10q", got.Data[0], tc.wantHead)
			}
		})
	}
}
