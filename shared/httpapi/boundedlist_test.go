package httpapi_test

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi"
)

func TestNewBoundedList(t *testing.T) {
	big := strings.Repeat("x", httpapi.MaxListBytes/3) // three fit, the fourth passes the budget
	tests := []struct {
		name     string
		items    []string
		limit    int
		wantLen  int
		wantMore bool
	}{
		{"small items: the limit decides", []string{"a", "b", "c"}, 2, 2, true},
		{"small items, all fit", []string{"a", "b"}, 5, 2, false},
		{"large items end the page early", []string{big, big, big, big, big}, 5, 2, true},
		{"one item over the budget still goes out", []string{big + big + big + big}, 5, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := httpapi.NewBoundedList(tc.items, tc.limit, func(s string) string { return s })
			if len(got.Data) != tc.wantLen || got.HasMore != tc.wantMore {
				t.Errorf("NewBoundedList = %d items, has_more %v; want %d, %v", len(got.Data), got.HasMore, tc.wantLen, tc.wantMore)
			}
		})
	}
}
