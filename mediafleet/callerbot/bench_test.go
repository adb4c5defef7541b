package callerbot_test

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	os.Exit(m.Run())
}

// pair joins two bots, a speaker and a listener, to a room of a fresh livekit-server.
func pair(t testing.TB) (speaker, listener *callerbot.Bot) {
	lk := livekittest.Start(t, livekitserver.Config{})
	cfg := lk.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := rooms.CreateRoom(ctx, rtc.RoomSpec{Name: "pair"}); err != nil {
		t.Fatal(err)
	}
	join := func(identity string) *callerbot.Bot {
		tok, err := rooms.ParticipantToken(rtc.Grant{Room: "pair", Identity: identity})
		if err != nil {
			t.Fatal(err)
		}
		silence := callerbot.Silence()
		b, err := callerbot.Join(ctx, callerbot.Options{URL: rooms.PublicURL(), Token: tok.JWT, Audio: &silence})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Leave)
		return b
	}
	speaker, listener = join("speaker"), join("listener")
	deadline := time.Now().Add(15 * time.Second)
	for len(listener.Heard(time.Time{})) < callerbot.HearRate/2 {
		if time.Now().After(deadline) {
			t.Fatal("the listener receives no audio from the speaker")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return speaker, listener
}

// BenchmarkSpeechToHearing measures what the sim's timings rest on: from a bot's
// utterance starting (and ending) going out, to another bot in the room hearing its onset
// (and its end), through a real livekit-server. It reports p50 and p95 of both lags in
// ms: the transport's share of any figure taken from Said and Sounds.
//
//	go test -run '^$' -bench SpeechToHearing -benchtime 20x ./mediafleet/callerbot/
func BenchmarkSpeechToHearing(b *testing.B) {
	speaker, listener := pair(b)
	ctx := context.Background()
	pcm, err := callerbot.Flite(ctx, "awb", "hello there")
	if err != nil {
		b.Fatal(err)
	}
	var onsets, ends []float64
	b.ResetTimer()
	for range b.N {
		i, err := speaker.Say("hello there", pcm)
		if err != nil {
			b.Fatal(err)
		}
		u, err := speaker.WaitSaid(ctx, i)
		if err != nil {
			b.Fatal(err)
		}
		var heard callerbot.Sound
		deadline := time.Now().Add(5 * time.Second)
		for {
			if s, ok := listener.SoundAfter("speaker", u.Start.Add(-FrameSlack)); ok && !s.Ongoing {
				heard = s
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("utterance %d not heard", i)
			}
			time.Sleep(10 * time.Millisecond)
		}
		onsets = append(onsets, float64(heard.Start.Sub(u.Start))/1e6)
		ends = append(ends, float64(heard.End.Sub(u.End))/1e6)
	}
	b.StopTimer()
	b.ReportMetric(pct(onsets, 50), "onset_p50_ms")
	b.ReportMetric(pct(onsets, 95), "onset_p95_ms")
	b.ReportMetric(pct(ends, 50), "end_p50_ms")
	b.ReportMetric(pct(ends, 95), "end_p95_ms")
}

// FrameSlack lets a sound heard a hair before the send time it is compared with (the
// clocks are one, but the send time is taken just before encoding) still count.
const FrameSlack = 5 * time.Millisecond

// TestSpeechToHearing: what one bot says, another hears from its start to its end, within
// a few frames.
func TestSpeechToHearing(t *testing.T) {
	speaker, listener := pair(t)
	ctx := context.Background()
	pcm, err := callerbot.Flite(ctx, "awb", "good morning")
	if err != nil {
		t.Fatal(err)
	}
	i, err := speaker.Say("good morning", pcm)
	if err != nil {
		t.Fatal(err)
	}
	u, err := speaker.WaitSaid(ctx, i)
	if err != nil {
		t.Fatal(err)
	}
	// A paced sender that fell behind (a loaded machine) catches up by sending a packet
	// early, so the whole can come out up to a frame short as well as late.
	if took := u.End.Sub(u.Start); took < u.Duration-callerbot.FrameDuration || took > u.Duration+callerbot.FrameDuration+60*time.Millisecond {
		t.Errorf("went out in %v, lasts %v", took, u.Duration)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s, ok := listener.SoundAfter("speaker", u.Start.Add(-FrameSlack)); ok && !s.Ongoing {
			onset, end := s.Start.Sub(u.Start), s.End.Sub(u.End)
			t.Logf("heard from +%v to %+v", onset, end)
			if onset > 100*time.Millisecond || end < -60*time.Millisecond || end > 100*time.Millisecond {
				t.Errorf("heard from +%v to %+v of the speech, want within a few frames", onset, end)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not heard; sounds %+v", listener.Sounds())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[(len(s)-1)*p/100]
}
