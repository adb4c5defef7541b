package sim_test

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// TestKind: the sim dials E.164 numbers and sim:<name> parties, and nothing else; it
// takes test keys and cannot transfer. Telephone platforms (platform.CheckE164) dial
// E.164 only.
func TestKind(t *testing.T) {
	var k platform.Kind = sim.Kind{}
	if k.Name() != "sim" || k.CanTransfer() || !k.TestKeys() {
		t.Errorf("sim.Kind: name %q, can transfer %v, test keys %v; want sim, false, true", k.Name(), k.CanTransfer(), k.TestKeys())
	}
	phone := platform.CheckE164
	for _, tc := range []struct {
		name, platform, handle string
		ok                     bool
	}{
		{"e164 on the sim", "sim", "+15550100002", true},
		{"shortest e164", "pstn", "+12345678", true},
		{"longest e164", "pstn", "+123456789012345", true},
		{"sim name", "sim", "sim:alice", true},
		{"sim scripted outcome", "sim", "sim:no_answer", true},
		{"sim name with dot and dash", "sim", "sim:long-talker.2", true},
		{"sim name of 64", "sim", "sim:" + strings.Repeat("a", 64), true},
		{"sim name of 65", "sim", "sim:" + strings.Repeat("a", 65), false},
		{"sim name empty", "sim", "sim:", false},
		{"sim name with a space", "sim", "sim:bad name", false},
		{"sim name starting with a dash", "sim", "sim:-x", false},
		{"bare name on the sim", "sim", "alice", false},
		{"sim name on a phone platform", "pstn", "sim:alice", false},
		{"too few digits", "pstn", "+1555", false},
		{"too many digits", "pstn", "+1234567890123456", false},
		{"no plus", "pstn", "15550100002", false},
		{"leading zero country code", "pstn", "+05550100002", false},
		{"spaces", "pstn", "+1 555 010 0002", false},
		{"dashes", "sim", "+1-555-010-0002", false},
	} {
		check := k.CheckHandle
		if tc.platform != "sim" {
			check = phone
		}
		err := check(tc.handle)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckHandle(%q) on %s = %v, want ok %v", tc.name, tc.handle, tc.platform, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "E.164") {
			t.Errorf("%s: CheckHandle(%q) on %s = %v, want the forms it dials, E.164 among them", tc.name, tc.handle, tc.platform, err)
		}
		if wantSim := tc.platform == "sim"; strings.Contains(err.Error(), "sim:<name>") != wantSim {
			t.Errorf("%s: refusal %q names the sim form: %v, want %v", tc.name, err, !wantSim, wantSim)
		}
	}
}
