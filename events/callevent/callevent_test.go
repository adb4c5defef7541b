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
		{"call.transcript.json", &CallTranscript{}},
		{"call.analyzed.json", &CallAnalyzed{}},
		{"recording.ready.json", &RecordingReady{}},
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

// TestMetadataIsAlwaysAnObject: receivers index metadata without a nil check, so none is
// written {}; session_metadata is absent exactly when session_id is.
func TestMetadataIsAlwaysAnObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		data any
		want []string
		not  []string
	}{
		{"ended, in a session without metadata", CallEnded{CallID: "call_1", SessionID: "ses_1"},
			[]string{`"metadata":{}`, `"session_metadata":{}`}, nil},
		{"ended, in a session with metadata", CallEnded{CallID: "call_1", SessionID: "ses_1", Metadata: map[string]string{"a": "1"}, SessionMetadata: map[string]string{"b": "2"}},
			[]string{`"metadata":{"a":"1"}`, `"session_metadata":{"b":"2"}`}, nil},
		{"ended, never in a session", CallEnded{CallID: "call_1"}, []string{`"metadata":{}`}, []string{"session_metadata"}},
		{"answered", CallAnswered{CallID: "call_1"}, []string{`"metadata":{}`}, nil},
		{"transcript", CallTranscript{CallID: "call_1"}, []string{`"metadata":{}`, `"interrupted":false`}, nil},
		{"incoming", CallIncoming{CallID: "call_1"}, []string{`"metadata":{}`, `"line_metadata":{}`}, nil},
		{"analyzed, skipped", CallAnalyzed{CallID: "call_1", Status: "skipped"},
			[]string{`"metadata":{}`, `"summary":null`, `"structured_data":null`, `"success":null`}, nil},
		{"recording ready", RecordingReady{CallID: "call_1"}, []string{`"metadata":{}`}, []string{"url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
			for _, n := range tc.not {
				if bytes.Contains(b, []byte(n)) {
					t.Errorf("%s has %s", b, n)
				}
			}
		})
	}
}
