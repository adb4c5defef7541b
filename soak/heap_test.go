package soak

import "testing"

// TestHeapInuseUnreadIsAnError: a heap profile that could not be fetched, or that holds
// no positive HeapInuse, is an error, never a heap of 0 that TestSoakShort would take for
// a measurement.
func TestHeapInuseUnreadIsAnError(t *testing.T) {
	for _, tc := range []struct {
		body   string
		noBody bool
		want   int64
	}{
		{noBody: true},
		{body: "heap profile: 0: 0 [0: 0] @ heap/1048576\n"},
		{body: "# HeapAlloc = 10\n# HeapInuse = 0\n"},
		{body: "# HeapAlloc = 10\n# HeapInuse = 8192000\n# NumGC = 4\n", want: 8192000},
	} {
		var body []byte
		if !tc.noBody {
			body = []byte(tc.body)
		}
		got, err := heapInuse(body)
		if tc.want == 0 && err == nil {
			t.Errorf("heapInuse(%q) = %d, want an error", tc.body, got)
		}
		if tc.want != 0 && (err != nil || got != tc.want) {
			t.Errorf("heapInuse(%q) = %d, %v; want %d", tc.body, got, err, tc.want)
		}
	}
}
