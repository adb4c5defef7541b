package sip_test

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/platform/sip"
)

// TestTrunkOfRoom: the trunk an inbound call's room names (LiveKit's individual dispatch
// rule makes <prefix>_<caller>_<random> of the rule's <RoomPrefix><trunk id>), and none
// for any other room.
func TestTrunkOfRoom(t *testing.T) {
	const trunk = "trunk_01kb0000000000000000000000"
	for room, want := range map[string]string{
		sip.RoomPrefix + trunk + "_+15559990001_AbCdEf": trunk,
		sip.RoomPrefix + trunk + "__x":                  trunk,
		sip.RoomPrefix + trunk:                          trunk,
		"ses_01kb0000000000000000000000":                "",
		sip.RoomPrefix + "line_test_+1555_x":            "",
		sip.RoomPrefix + "trunk_short_+1555_x":          "",
		"x" + sip.RoomPrefix + trunk + "_+1555_x":       "",
	} {
		if got := sip.TrunkOfRoom(room); got != want {
			t.Errorf("TrunkOfRoom(%q) = %q, want %q", room, got, want)
		}
	}
}
