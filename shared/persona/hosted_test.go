package persona

import (
	"slices"
	"strings"
	"testing"
)

func TestParseHostedVoices(t *testing.T) {
	tests := []struct {
		name, list string
		want       []string
		wantErr    bool
	}{
		{"unset", "", nil, false},
		{"names, trimmed, blanks and repeats skipped", " alloy, nova,,alloy ,en-US.Neural_2 ", []string{"alloy", "nova", "en-US.Neural_2"}, false},
		{"a space inside a name", "alloy,bad name", nil, true},
		{"a quote", `al"loy`, nil, true},
		{"too long", strings.Repeat("v", 65), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHostedVoices(tc.list)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Errorf("ParseHostedVoices(%q) = %q, %v; want %q, error %v", tc.list, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestDeploymentVoices: the local voices first, then the hosted ones; ids are unique and
// every avatar's default voice is in the catalogue.
func TestDeploymentVoices(t *testing.T) {
	vs := DeploymentVoices([]string{"alloy", "nova"})
	if len(vs) != len(LocalVoices)+2 || vs[len(vs)-1].ID != "hosted-nova" || vs[len(vs)-1].Engine != EngineHosted || vs[len(vs)-1].EngineVoice != "nova" {
		t.Fatalf("DeploymentVoices = %+v, want the local voices then hosted-alloy, hosted-nova", vs)
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.ID] {
			t.Errorf("voice id %s twice", v.ID)
		}
		seen[v.ID] = true
	}
	voiced := 0
	for _, v := range LocalVoices {
		voiced += len(AvatarsVoicing(v.ID))
	}
	if voiced != len(AvatarVoices) {
		t.Errorf("AvatarsVoicing covers %d avatars over the local voices, want %d", voiced, len(AvatarVoices))
	}
	for avatar, id := range AvatarVoices {
		if !seen[id] || !slices.Contains(AvatarsVoicing(id), avatar) {
			t.Errorf("avatar %s: default voice %s not in the catalogue or not listed as its default", avatar, id)
		}
	}
}
