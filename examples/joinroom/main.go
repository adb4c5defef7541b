// Command joinroom joins a Bridgeline session's room with LiveKit's Go SDK and prints who
// is there, what they publish and, in an assistant call, the live captions, as
// docs/joining.md shows: it is the guide's Go snippet,
// kept whole here so that a test runs it against the real stack.
//
//	go run ./examples/joinroom "$RTC_URL" "$PARTICIPANT_TOKEN"
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/webrtc/v4"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: joinroom RTC_URL PARTICIPANT_TOKEN")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := join(ctx, os.Args[1], os.Args[2], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "joinroom:", err)
		os.Exit(1)
	}
}

// snippet: join (docs/joining.md shows from here to the end of the file)

// join connects with the session's rtc_url and participant_token, reports every track it
// receives and, in an assistant call, the live captions of both sides, and leaves when
// ctx ends.
func join(ctx context.Context, rtcURL, token string, out io.Writer) error {
	cb := lksdk.NewRoomCallback()
	cb.OnParticipantConnected = func(p *lksdk.RemoteParticipant) {
		fmt.Fprintf(out, "joined: %s (%s, kind %s)\n", p.Identity(), p.Name(), livekit.ParticipantInfo_Kind(p.Kind()))
	}
	cb.OnTrackSubscribed = func(_ *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, p *lksdk.RemoteParticipant) {
		fmt.Fprintf(out, "track: %s publishes %s (%s, %s)\n", p.Identity(), pub.Name(), pub.Kind(), pub.Source())
	}
	cb.OnParticipantDisconnected = func(p *lksdk.RemoteParticipant) {
		fmt.Fprintf(out, "left: %s\n", p.Identity())
	}
	room := lksdk.NewRoom(cb)
	// Captions: LiveKit transcriptions, text streams on lk.transcription sent on behalf of
	// who spoke; each turn of each side is one segment, and its last stream is final.
	err := room.RegisterTextStreamHandler("lk.transcription", func(r *lksdk.TextStreamReader, identity string) {
		a := r.Info.Attributes
		fmt.Fprintf(out, "caption: %s %s final=%s: %s\n", identity, a["lk.segment_id"], a["lk.transcription_final"], r.ReadAll())
	})
	if err != nil {
		return err
	}
	if err := room.JoinWithToken(rtcURL, token); err != nil { // subscribes to every track
		return fmt.Errorf("connect: %w", err)
	}
	defer room.Disconnect()
	me := room.LocalParticipant
	fmt.Fprintf(out, "me: %s in %s, can publish: %v\n", me.Identity(), room.Name(), me.Permissions().GetCanPublish())
	for _, p := range room.GetRemoteParticipants() { // those already in the room
		fmt.Fprintf(out, "present: %s (%s, kind %s)\n", p.Identity(), p.Name(), livekit.ParticipantInfo_Kind(p.Kind()))
	}
	<-ctx.Done()
	return nil
}
