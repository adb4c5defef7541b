package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestNumber(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"e164", "+15550100003", "***0003"},
		{"national", "5550100003", "***0003"},
		{"sip uri", "sip:+15550100003@trunk.example.com", "sip:***0003@trunk.example.com"},
		{"separators", "+1 (555) 010-0003", "***0003"},
		{"sim handle", "sim:sales", "sim:sales"},
		{"extension", "1234", "1234"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Number(tc.in); got != tc.want {
				t.Errorf("Number(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"json log line", `{"level":"info","msg":"processing invite","fromUser":"+15550100009","toUser":"15550100001"}`,
			`{"level":"info","msg":"processing invite","fromUser":"***0009","toUser":"***0001"}`},
		{"sip header", "From: <sip:+15550100009@10.0.0.1>;tag=ab12", "From: <sip:***0009@10.0.0.1>;tag=ab12"},
		{"identifiers made from a number", `"room": "sipin-trunk_01m97505matfrkpnc3vtvwvh3a_+15559990011_itBjwzksShZh", "participant": "sip_+15559990011"`,
			`"room": "sipin-trunk_01m97505matfrkpnc3vtvwvh3a_***0011_itBjwzksShZh", "participant": "sip_***0011"`},
		{"trace ids stay", `"traceID": "3841746555706471"`, `"traceID": "3841746555706471"`},
		{"ids stay", "call_01jd3f4g5h6j7k8m9n0p1q2r3t ses_01jd3f4g5h6j7k8m9n0p1q2r3t", "call_01jd3f4g5h6j7k8m9n0p1q2r3t ses_01jd3f4g5h6j7k8m9n0p1q2r3t"},
		{"times stay", "2026-12-07T01:18:33.123Z", "2026-12-07T01:18:33.123Z"},
		{"hex stays", "z9hG4bK1234567890abc", "z9hG4bK1234567890abc"},
		{"too long for e164", "12345678901234567890", "12345678901234567890"},
		{"short counts stay", "rtp port 20000 of 32767", "rtp port 20000 of 32767"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Numbers(tc.in); got != tc.want {
				t.Errorf("Numbers(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// A log line through Handler holds no full number: not in the message, a string field,
// an error's text, a group or a logger's own attributes; ids and counts stay.
func TestHandlerMasksNumbers(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewJSONHandler(&buf, nil))).With("line", "+15550100001")
	log.Info("call from +15550100009", "to", "sip:+15550100003@trunk.example", "err", errors.New("refer to 15550100042 refused"),
		slog.Group("transfer", "destination", "+447700900123"), "call_id", "call_01jd3f4g5h6j7k8m9n0p1q2r3t", "size", 12345678)
	out := buf.String()
	for _, full := range []string{"15550100001", "15550100009", "15550100003", "15550100042", "447700900123"} {
		if strings.Contains(out, full) {
			t.Errorf("log line holds %s: %s", full, out)
		}
	}
	for _, kept := range []string{"***0001", "***0009", "***0003", "***0042", "***0123", "call_01jd3f4g5h6j7k8m9n0p1q2r3t", `"size":12345678`} {
		if !strings.Contains(out, kept) {
			t.Errorf("log line lacks %s: %s", kept, out)
		}
	}
}
