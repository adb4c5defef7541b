package config

import (
	"slices"
	"strings"
	"testing"
)

func TestHostedVoices(t *testing.T) {
	tests := []struct {
		name, voices, baseURL string
		want                  []string
		wantErr               string
	}{
		{"none", "", "", nil, ""},
		{"with the speech API", "alloy, nova", "http://127.0.0.1:9000", []string{"alloy", "nova"}, ""},
		{"without the speech API", "alloy", "", nil, "TTS_BASE_URL"},
		{"a bad name", "al loy", "http://127.0.0.1:9000", nil, "TTS_VOICES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TTS_VOICES", tc.voices)
			t.Setenv("TTS_BASE_URL", tc.baseURL)
			c, err := FromEnv()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FromEnv() error = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(c.HostedVoices, tc.want) {
				t.Errorf("FromEnv() HostedVoices = %q, %v; want %q", c.HostedVoices, err, tc.want)
			}
		})
	}
}
