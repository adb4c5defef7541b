package lkapi

import (
	"reflect"
	"testing"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/shared/rtc"
)

// TestEvent: what the control plane reads of LiveKit's webhook events.
func TestEvent(t *testing.T) {
	tests := []struct {
		name string
		in   *livekit.WebhookEvent
		want rtc.WebhookEvent
	}{
		{"room finished", &livekit.WebhookEvent{Event: "room_finished", Room: &livekit.Room{Name: "ses_1"}},
			rtc.WebhookEvent{Event: rtc.EventRoomFinished, Room: "ses_1"}},
		{"customer left", &livekit.WebhookEvent{Event: "participant_left", Room: &livekit.Room{Name: "ses_1"},
			Participant: &livekit.ParticipantInfo{Identity: "customer", Kind: livekit.ParticipantInfo_STANDARD,
				DisconnectReason: livekit.DisconnectReason_CLIENT_INITIATED}},
			rtc.WebhookEvent{Event: rtc.EventParticipantLeft, Room: "ses_1",
				Participant: &rtc.Participant{Identity: "customer", Kind: rtc.KindStandard, DisconnectReason: "CLIENT_INITIATED"}}},
		{"replaced by a newer connection", &livekit.WebhookEvent{Event: "participant_left", Room: &livekit.Room{Name: "ses_1"},
			Participant: &livekit.ParticipantInfo{Identity: "customer", DisconnectReason: livekit.DisconnectReason_DUPLICATE_IDENTITY}},
			rtc.WebhookEvent{Event: rtc.EventParticipantLeft, Room: "ses_1",
				Participant: &rtc.Participant{Identity: "customer", Kind: rtc.KindStandard, DisconnectReason: rtc.DisconnectDuplicateIdentity}}},
		{"agent left", &livekit.WebhookEvent{Event: "participant_left", Room: &livekit.Room{Name: "ses_1"},
			Participant: &livekit.ParticipantInfo{Identity: "assistant-j", Kind: livekit.ParticipantInfo_AGENT}},
			rtc.WebhookEvent{Event: rtc.EventParticipantLeft, Room: "ses_1",
				Participant: &rtc.Participant{Identity: "assistant-j", Kind: rtc.KindAgent}}},
		{"sip party joined", &livekit.WebhookEvent{Event: "participant_joined", Room: &livekit.Room{Name: "ses_1"},
			Participant: &livekit.ParticipantInfo{Identity: "platform", Kind: livekit.ParticipantInfo_SIP}},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_1",
				Participant: &rtc.Participant{Identity: "platform", Kind: rtc.KindSIP}}},
		{"no room", &livekit.WebhookEvent{Event: "egress_started"}, rtc.WebhookEvent{Event: "egress_started"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := event(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("event() = %+v (participant %+v), want %+v (participant %+v)", got, got.Participant, tc.want, tc.want.Participant)
			}
		})
	}
}
