package livekitserver_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	protoLogger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/webrtc/v4"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

// BenchmarkJoin measures what a customer's client waits for when it joins a session's
// room: a server-sdk-go client connects with a participant token minted as the control
// plane mints one (shared/rtc/lkhttp), into a room created as a session's room is, where
// another participant (a callerbot) already publishes audio. Per join:
//
//   - connected-ms: the connect call to its return (the SDK returns once its primary
//     peer connection, the subscriber, is connected)
//   - track-ms: the connect call to the first remote track subscribed (the SDK fires it
//     on the track's first RTP packet)
//
// each as the median and p95 (and the slowest, max), and over-1s-pct, the share of joins
// whose connect call took a second or more. On two livekit-servers side by side, one join
// to each per iteration, in alternating order: lite-*, the server as the stack configures
// it (rtc.use_ice_lite), and full-ice-*, the baseline, livekit-server's default full ICE
// agent (Config.FullICE), whose joins wait an extra second on pion's peer-reflexive
// nomination timer whenever the client's first check beats its trickled candidate.
//
//	go test -run '^$' -bench Join -benchtime 40x ./mediafleet/livekitserver/
func BenchmarkJoin(b *testing.B) {
	lksdk.SetLogger(protoLogger.GetDiscardLogger())
	servers := []*joinTarget{
		newJoinTarget(b, "lite", livekitserver.Config{}),
		newJoinTarget(b, "full-ice", livekitserver.Config{FullICE: true}),
	}
	i := 0
	// The first join to a fresh server is not measured: it pays for the server's first
	// room and the SDK's first connection.
	for warm := true; warm || b.Loop(); warm = false {
		i++
		for k := range servers {
			s := servers[(i+k)%len(servers)]
			connected, track := s.join(b, fmt.Sprintf("ses_bench_%d", i))
			if !warm {
				s.connected = append(s.connected, connected)
				s.track = append(s.track, track)
			}
		}
	}
	for _, s := range servers {
		report(b, s.name+"-connected", s.connected)
		report(b, s.name+"-track", s.track)
		slow := 0
		for _, d := range s.connected {
			if d >= time.Second {
				slow++
			}
		}
		b.ReportMetric(100*float64(slow)/float64(len(s.connected)), s.name+"-over-1s-pct")
	}
}

// joinTarget is one livekit-server under measurement and the joins measured on it.
type joinTarget struct {
	name             string
	rooms            *lkapi.Client
	connected, track []time.Duration
}

func newJoinTarget(b *testing.B, name string, cfg livekitserver.Config) *joinTarget {
	s := livekittest.Start(b, cfg)
	c := s.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: s.HTTPURL(), PublicURL: s.WSURL(), APIKey: c.APIKey, APISecret: c.APISecret})
	if err != nil {
		b.Fatal(err)
	}
	return &joinTarget{name: name, rooms: rooms}
}

// join creates the room with a publishing participant in it, joins a customer's client,
// and returns the connect call's duration and the time to its first remote track.
func (s *joinTarget) join(b *testing.B, room string) (connected, track time.Duration) {
	ctx := context.Background()
	if _, err := s.rooms.CreateRoom(ctx, rtc.RoomSpec{Name: room}); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.rooms.DeleteRoom(ctx, room) }()
	grant := func(identity string) string {
		tok, err := s.rooms.ParticipantToken(rtc.Grant{Room: room, Identity: identity})
		if err != nil {
			b.Fatal(err)
		}
		return tok.JWT
	}
	tone := callerbot.Tone(300)
	other, err := callerbot.Join(ctx, callerbot.Options{URL: s.rooms.PublicURL(), Token: grant("other"), Audio: &tone})
	if err != nil {
		b.Fatal(err)
	}
	defer other.Leave()

	subscribed := make(chan time.Time, 1)
	cb := lksdk.NewRoomCallback()
	cb.OnTrackSubscribed = func(*webrtc.TrackRemote, *lksdk.RemoteTrackPublication, *lksdk.RemoteParticipant) {
		select {
		case subscribed <- time.Now():
		default:
		}
	}
	token := grant("customer")
	start := time.Now()
	client, err := lksdk.ConnectToRoomWithToken(s.rooms.PublicURL(), token, cb)
	if err != nil {
		b.Fatal(err)
	}
	connected = time.Since(start)
	defer client.Disconnect()
	select {
	case at := <-subscribed:
		track = at.Sub(start)
	case <-time.After(15 * time.Second):
		b.Fatalf("%s: no remote track within 15 s of the join", s.name)
	}
	return connected, track
}

// report adds the median, p95 and maximum of ds in ms as metrics named after name.
func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(ds[len(ds)/2]), name+"-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*95/100)]), name+"-p95-ms")
	b.ReportMetric(ms(ds[len(ds)-1]), name+"-max-ms")
}
