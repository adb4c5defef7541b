package lkhttp_test

import (
	"testing"

	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// TestDecodeWebhook reads webhook bodies encoded by protobuf's own JSON encoder (as
// livekit-server encodes them) in each of its forms: JSON names or proto names, enum names
// or numbers. e2e/livekit checks real deliveries from livekit-server.
func TestDecodeWebhook(t *testing.T) {
	left := &livekit.WebhookEvent{Event: "participant_left", Id: "EV_1", CreatedAt: 1700000000,
		Room: &livekit.Room{Sid: "RM_1", Name: "ses_1", MaxParticipants: 6},
		Participant: &livekit.ParticipantInfo{Identity: "agent-1", Kind: livekit.ParticipantInfo_AGENT,
			DisconnectReason: livekit.DisconnectReason_CLIENT_INITIATED}}
	joined := &livekit.WebhookEvent{Event: "participant_joined", Room: &livekit.Room{Name: "ses_2"},
		Participant: &livekit.ParticipantInfo{Identity: "customer"}}
	publisher := &livekit.WebhookEvent{Event: "participant_joined", Room: &livekit.Room{Name: "ses_4"},
		Participant: &livekit.ParticipantInfo{Identity: "customer-a", Permission: &livekit.ParticipantPermission{CanSubscribe: true, CanPublish: true}}}
	dataOnly := &livekit.WebhookEvent{Event: "participant_joined", Room: &livekit.Room{Name: "ses_4"},
		Participant: &livekit.ParticipantInfo{Identity: "customer-b", Permission: &livekit.ParticipantPermission{CanSubscribe: true, CanPublishData: true}}}
	watcher := &livekit.WebhookEvent{Event: "participant_joined", Room: &livekit.Room{Name: "ses_4"},
		Participant: &livekit.ParticipantInfo{Identity: "customer-c", Permission: &livekit.ParticipantPermission{CanSubscribe: true}}}
	started := &livekit.WebhookEvent{Event: "room_started", Room: &livekit.Room{Name: "ses_3"}}
	tests := []struct {
		name string
		ev   *livekit.WebhookEvent
		opts protojson.MarshalOptions
		want rtc.WebhookEvent
	}{
		{"an agent left, JSON names", left, protojson.MarshalOptions{},
			rtc.WebhookEvent{Event: "participant_left", Room: "ses_1", Participant: &rtc.Participant{Identity: "agent-1", Kind: rtc.KindAgent, DisconnectReason: "CLIENT_INITIATED"}}},
		{"an agent left, proto names", left, protojson.MarshalOptions{UseProtoNames: true},
			rtc.WebhookEvent{Event: "participant_left", Room: "ses_1", Participant: &rtc.Participant{Identity: "agent-1", Kind: rtc.KindAgent, DisconnectReason: "CLIENT_INITIATED"}}},
		{"an agent left, enum numbers", left, protojson.MarshalOptions{UseEnumNumbers: true},
			rtc.WebhookEvent{Event: "participant_left", Room: "ses_1", Participant: &rtc.Participant{Identity: "agent-1", Kind: rtc.KindAgent}}},
		{"a standard participant joined, defaults omitted", joined, protojson.MarshalOptions{},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_2", Participant: &rtc.Participant{Identity: "customer", Kind: rtc.KindStandard}}},
		{"a standard participant joined, defaults emitted", joined, protojson.MarshalOptions{EmitUnpopulated: true},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_2", Participant: &rtc.Participant{Identity: "customer", Kind: rtc.KindStandard}}},
		{"a publisher joined, proto names", publisher, protojson.MarshalOptions{UseProtoNames: true},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_4", Participant: &rtc.Participant{Identity: "customer-a", Kind: rtc.KindStandard, CanPublish: true}}},
		{"a data publisher joined", dataOnly, protojson.MarshalOptions{},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_4", Participant: &rtc.Participant{Identity: "customer-b", Kind: rtc.KindStandard, CanPublish: true}}},
		{"a watcher joined, defaults emitted", watcher, protojson.MarshalOptions{EmitUnpopulated: true},
			rtc.WebhookEvent{Event: "participant_joined", Room: "ses_4", Participant: &rtc.Participant{Identity: "customer-c", Kind: rtc.KindStandard}}},
		{"a room started", started, protojson.MarshalOptions{EmitUnpopulated: true},
			rtc.WebhookEvent{Event: "room_started", Room: "ses_3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.opts.Marshal(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := lkhttp.DecodeWebhook(body)
			if err != nil {
				t.Fatalf("DecodeWebhook(%s) = %v", body, err)
			}
			if got.Event != tc.want.Event || got.Room != tc.want.Room || (got.Participant == nil) != (tc.want.Participant == nil) ||
				got.Participant != nil && *got.Participant != *tc.want.Participant {
				t.Errorf("DecodeWebhook(%s) = %+v %+v, want %+v %+v", body, got, got.Participant, tc.want, tc.want.Participant)
			}
		})
	}
	if _, err := lkhttp.DecodeWebhook([]byte(`{"event": 3}`)); err == nil {
		t.Error("DecodeWebhook(event not a string) = nil error")
	}
}
