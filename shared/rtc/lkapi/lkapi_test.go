package lkapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

func TestConfigValidate(t *testing.T) {
	ok := lkapi.Config{URL: "http://127.0.0.1:7880", PublicURL: "ws://127.0.0.1:7880", APIKey: "k", APISecret: "s"}
	tests := []struct {
		name string
		edit func(*lkapi.Config)
	}{
		{"ws api url", func(c *lkapi.Config) { c.URL = "ws://127.0.0.1:7880" }},
		{"http public url", func(c *lkapi.Config) { c.PublicURL = "http://127.0.0.1:7880" }},
		{"no secret", func(c *lkapi.Config) { c.APISecret = "" }},
		{"ttl too long", func(c *lkapi.Config) { c.TokenTTL = 2 * time.Hour }},
		{"ttl too short", func(c *lkapi.Config) { c.TokenTTL = time.Second }},
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			if err := c.Validate(); err == nil {
				t.Error("Validate() = nil, want an error")
			}
		})
	}
}

func TestParticipantTokenGrants(t *testing.T) {
	c, err := lkapi.New(lkapi.Config{URL: "http://127.0.0.1:1", PublicURL: "ws://127.0.0.1:1", APIKey: "APIk", APISecret: strings.Repeat("x", 32)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ttl := range []time.Duration{0, time.Minute, time.Hour} {
		tok, err := c.ParticipantToken(rtc.Grant{Room: "ses_1", Identity: "customer", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		v, err := auth.ParseAPIToken(tok.JWT)
		if err != nil {
			t.Fatal(err)
		}
		claims, grants, err := v.Verify(strings.Repeat("x", 32))
		if err != nil {
			t.Fatal(err)
		}
		want := ttl
		if want == 0 {
			want = rtc.DefaultTokenTTL
		}
		if !claims.ExpiresAt.Time.Equal(tok.ExpiresAt) {
			t.Errorf("ExpiresAt = %v, want the exp claim %v", tok.ExpiresAt, claims.ExpiresAt.Time)
		}
		if got := claims.ExpiresAt.Sub(claims.IssuedAt.Time); got != want {
			t.Errorf("exp - iat = %v, want %v", got, want)
		}
		vg := grants.Video
		if !vg.RoomJoin || vg.Room != "ses_1" || !vg.GetCanPublish() || !vg.GetCanSubscribe() || !vg.GetCanPublishData() {
			t.Errorf("grant = %+v, want join ses_1 with publish, subscribe, data", vg)
		}
		if vg.RoomCreate || vg.RoomAdmin || vg.RoomList || vg.RoomRecord || vg.IngressAdmin || vg.Agent {
			t.Errorf("grant = %+v carries an admin grant", vg)
		}
		if grants.Identity != "customer" {
			t.Errorf("identity = %q, want customer", grants.Identity)
		}
	}
	// A watcher's token: subscribe only, both publish flags written out as false (an
	// absent canPublish would mean allowed), still no admin grant.
	watch, err := c.ParticipantToken(rtc.Grant{Room: "ses_1", Identity: "customer-watch", SubscribeOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.ParseAPIToken(watch.JWT)
	if err != nil {
		t.Fatal(err)
	}
	_, grants, err := v.Verify(strings.Repeat("x", 32))
	if err != nil {
		t.Fatal(err)
	}
	if vg := grants.Video; vg.CanPublish == nil || *vg.CanPublish || vg.CanPublishData == nil || *vg.CanPublishData ||
		!vg.GetCanSubscribe() || !vg.RoomJoin || vg.Room != "ses_1" || vg.RoomAdmin || vg.RoomCreate || vg.RoomList {
		t.Errorf("watch-only grant = %+v, want join ses_1, subscribe, canPublish and canPublishData false", vg)
	}
	// A web call's caller: publishes its camera and microphone only, and no data, as
	// LiveKit's own parser reads the grant.
	caller, err := c.ParticipantToken(rtc.Grant{Room: "ses_1", Identity: "customer-caller",
		Sources: []string{rtc.SourceCamera, rtc.SourceMicrophone}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err = auth.ParseAPIToken(caller.JWT); err != nil {
		t.Fatal(err)
	}
	if _, grants, err = v.Verify(strings.Repeat("x", 32)); err != nil {
		t.Fatal(err)
	}
	vg := grants.Video
	if !vg.GetCanPublish() || vg.GetCanPublishData() || !vg.GetCanSubscribe() || vg.Room != "ses_1" || vg.RoomAdmin || vg.RoomCreate {
		t.Errorf("caller grant = %+v, want join ses_1, publish and subscribe, no data, no admin", vg)
	}
	if !vg.GetCanPublishSource(livekit.TrackSource_CAMERA) || !vg.GetCanPublishSource(livekit.TrackSource_MICROPHONE) ||
		vg.GetCanPublishSource(livekit.TrackSource_SCREEN_SHARE) || vg.GetCanPublishSource(livekit.TrackSource_SCREEN_SHARE_AUDIO) {
		t.Errorf("caller may publish %v, want camera and microphone only", vg.CanPublishSources)
	}
	for _, ttl := range []time.Duration{30 * time.Second, 61 * time.Minute} {
		if _, err := c.ParticipantToken(rtc.Grant{Room: "r", Identity: "i", TTL: ttl}); err == nil {
			t.Errorf("ParticipantToken(TTL %v) = nil error, want out of range", ttl)
		}
	}
}
