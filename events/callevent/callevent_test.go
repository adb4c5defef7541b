package callevent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The golden payloads are the contract receivers code against: each decodes into its Go
// type and encodes back to the same bytes, so a renamed or dropped field fails here.
func TestGoldenPayloads(t *testing.T) {
	for _, tc := range []struct {
		file string
		data any
	}{
		{"call.ended.json", &CallEnded{}},
		{"call.incoming.json", &CallIncoming{}},
		{"call.answered.json", &CallAnswered{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			golden = bytes.TrimSpace(golden)
			var evt Event
			dec := json.NewDecoder(bytes.NewReader(golden))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&evt); err != nil {
				t.Fatalf("envelope: %v", err)
			}
			dec = json.NewDecoder(bytes.NewReader(evt.Data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tc.data); err != nil {
				t.Fatalf("data: %v", err)
			}
			evt.Data, err = json.Marshal(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(evt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, golden) {
				t.Errorf("re-encoded:\n%s\nwant:\n%s", got, golden)
			}
		})
	}
}
