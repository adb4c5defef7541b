// Package callerbot is a scripted caller for tests, benchmarks and demos. It joins a
// LiveKit room as an ordinary participant, publishes audio (speech or a tone through
// Opus) and optionally a camera track (VP8), subscribes to everything the others publish,
// and decodes it: VP8 frames go to a callback, Opus audio is kept at 16 kHz so that a
// test can check what a caller hears (loudness, or speech recognition).
//
// A bot can also hold a conversation's caller side: Say queues speech that goes out in
// real time, 20 ms a packet, with the moment each utterance starts and ends going out
// (Said), and Sounds lists the stretches of audio it heard from the others with their
// onset and end as they arrived. Both clocks are this process's, so a test reads the
// time from the end of its own speech to the first reply reaching it.
package callerbot

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/livekit/server-sdk-go/v2/pkg/samplebuilder"
	"github.com/pion/rtcp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
)

// HearRate is the sample rate of the audio the bot keeps.
const HearRate = 16000

// Source is what the bot says: PCM at Rate, played in a loop with a pause between loops.
type Source struct {
	PCM tts.PCM
}

// Tone is a continuous sine at freq Hz.
func Tone(freq float64) Source {
	pcm := make([]int16, 48000)
	for i := range pcm {
		pcm[i] = int16(6000 * math.Sin(2*math.Pi*freq*float64(i)/48000))
	}
	return Source{PCM: tts.PCM{Rate: 48000, Samples: pcm}}
}

// Speech speaks text with s, in a loop.
func Speech(ctx context.Context, s tts.Synthesizer, text string) (Source, error) {
	pcm, err := s.Synthesize(ctx, text)
	if err != nil {
		return Source{}, err
	}
	return Source{PCM: pcm}, nil
}

// Frame is one decoded video frame.
type Frame struct {
	At          time.Time
	Participant string
	Image       *image.YCbCr
}

// Options configure a bot.
type Options struct {
	URL, Token string
	// Audio is what the bot publishes, in a loop, until it is told to Say something;
	// nil publishes no audio track (a caller whose microphone never works). Silence()
	// publishes silence until then.
	Audio *Source
	// QuietForAgents stops the loop for good (the bot sends silence instead) once a
	// participant of kind agent (an AI assistant) is in the room: an assistant listens,
	// and would hear a looped tone as the caller talking.
	QuietForAgents bool
	// Video publishes a 320x180 camera test pattern: a bar sweeping a grey field, or a
	// field of VideoTint's chroma (Cb, Cr) when set, to tell two bots' pictures apart.
	Video     bool
	VideoTint [2]uint8
	// VideoColor, when set, makes the camera show that one colour, without the bar: a
	// caller holding a card up to the camera.
	VideoColor *color.RGBA
	// OnFrame sees every decoded video frame, on the decoding goroutine.
	OnFrame func(Frame)
}

// Bot is a joined caller.
type Bot struct {
	room     *lksdk.Room
	opts     Options
	ctx      context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	joinedAt time.Time

	mu           sync.Mutex
	heard        []int16 // everything heard, 16 kHz mono, in arrival order
	heardAt      []time.Time
	firstLoud    time.Time
	firstFrameAt time.Time
	gone         chan struct{}
	goneOnce     sync.Once
	remoteLeft   chan string

	speaks bool // an audio track is published
	said   []*utterance
	next   int  // the utterance playing or next to play
	spoke  bool // told to say something: the loop is over
	hushed bool // an agent is in the room (QuietForAgents): the loop is over
	sounds []*sound
}

// loudRMS is the level (of 1.0 full scale) above which a 20 ms chunk counts as sound.
const loudRMS = 0.02

// Join connects the bot and starts publishing.
func Join(ctx context.Context, opts Options) (*Bot, error) {
	bctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	b := &Bot{opts: opts, ctx: bctx, stop: stop, gone: make(chan struct{}), remoteLeft: make(chan string, 8)}
	cb := lksdk.NewRoomCallback()
	cb.OnTrackSubscribed = func(track *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
		b.noteAgent(rp)
		b.spawn(func() {
			switch track.Kind() {
			case webrtc.RTPCodecTypeAudio:
				b.hear(track, rp.Identity())
			case webrtc.RTPCodecTypeVideo:
				b.watch(track, rp)
			}
		})
	}
	cb.OnParticipantConnected = b.noteAgent
	cb.OnDisconnected = func() { b.goneOnce.Do(func() { close(b.gone) }) }
	cb.OnParticipantDisconnected = func(rp *lksdk.RemoteParticipant) {
		select {
		case b.remoteLeft <- rp.Identity():
		default:
		}
	}
	room, err := lksdk.ConnectToRoomWithToken(opts.URL, opts.Token, cb)
	if err != nil {
		stop()
		return nil, fmt.Errorf("callerbot join: %w", err)
	}
	b.room = room
	b.joinedAt = time.Now()
	for _, rp := range room.GetRemoteParticipants() {
		b.noteAgent(rp)
	}
	if opts.Audio != nil {
		if err := b.publishAudio(*opts.Audio); err != nil {
			b.Leave()
			return nil, err
		}
	}
	if opts.Video {
		if err := b.publishVideo(); err != nil {
			b.Leave()
			return nil, err
		}
	}
	return b, nil
}

// Silence is a Source of silence: the bot publishes an audio track that carries nothing
// until it is told to Say something.
func Silence() Source {
	return Source{PCM: tts.PCM{Rate: 48000, Samples: make([]int16, frameSamples)}}
}

// noteAgent hushes the loop when rp is an agent and the bot is QuietForAgents.
func (b *Bot) noteAgent(rp *lksdk.RemoteParticipant) {
	if !b.opts.QuietForAgents || rp.Kind() != lksdk.ParticipantAgent {
		return
	}
	b.mu.Lock()
	b.hushed = true
	b.mu.Unlock()
}

// Identity is the bot's participant identity.
func (b *Bot) Identity() string { return b.room.LocalParticipant.Identity() }

// Room is the bot's room connection.
func (b *Bot) Room() *lksdk.Room { return b.room }

// spawn runs fn on a goroutine Leave waits for, unless leaving has begun. The SDK calls
// back on its own goroutines, possibly while Leave waits, and wg.Add must never race
// wg.Wait. It reports whether fn was started.
func (b *Bot) spawn(fn func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
	return true
}

// Leave hangs up: the bot leaves the room and stops its goroutines.
func (b *Bot) Leave() {
	b.mu.Lock()
	b.stop()
	b.mu.Unlock()
	if b.room != nil {
		b.room.Disconnect()
	}
	b.wg.Wait()
}

// Disconnected is closed when the room connection ends (the room was deleted).
func (b *Bot) Disconnected() <-chan struct{} { return b.gone }

// RemoteLeft delivers the identities of participants that left.
func (b *Bot) RemoteLeft() <-chan string { return b.remoteLeft }

// FirstSound is when the bot first heard audio above the loudness floor (zero if never).
func (b *Bot) FirstSound() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.firstLoud
}

// Heard returns everything heard since t, 16 kHz mono.
func (b *Bot) Heard(since time.Time) []int16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int16
	for i, at := range b.heardAt {
		if !at.Before(since) {
			out = append(out, b.heard[i*chunk:(i+1)*chunk]...)
		}
	}
	return out
}

// chunk is how many heard samples share one arrival time (20 ms at 16 kHz).
const chunk = HearRate / 50

func (b *Bot) hear(track *webrtc.TrackRemote, participant string) {
	dec, err := opus.NewDecoder(HearRate, 1)
	if err != nil {
		return
	}
	defer dec.Close()
	pcm := make([]int16, dec.MaxFrame())
	var pending []int16
	var cur *sound
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			return
		}
		n, err := dec.Decode(pkt.Payload, pcm)
		if err != nil {
			continue
		}
		now := time.Now()
		pending = append(pending, pcm[:n]...)
		for len(pending) >= chunk {
			c := pending[:chunk]
			b.mu.Lock()
			b.heard = append(b.heard, c...)
			b.heardAt = append(b.heardAt, now)
			lvl := rms(c)
			if b.firstLoud.IsZero() && lvl > loudRMS {
				b.firstLoud = now
			}
			b.noteLevel(&cur, participant, now, lvl)
			b.mu.Unlock()
			pending = pending[chunk:]
		}
	}
}

func rms(s []int16) float64 {
	var sum float64
	for _, v := range s {
		x := float64(v) / 32768
		sum += x * x
	}
	return math.Sqrt(sum / float64(len(s)))
}

func (b *Bot) watch(track *webrtc.TrackRemote, rp *lksdk.RemoteParticipant) {
	if track.Codec().MimeType != webrtc.MimeTypeVP8 {
		return
	}
	dec, err := vp8.NewDecoder()
	if err != nil {
		return
	}
	defer dec.Close()
	sb := samplebuilder.New(128, &codecs.VP8Packet{}, track.Codec().ClockRate)
	haveKey := false
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			return
		}
		sb.Push(pkt)
		for s := sb.Pop(); s != nil; s = sb.Pop() {
			if len(s.Data) == 0 {
				continue
			}
			// A VP8 frame's first bit is 0 on keyframes; decoding can only start at one.
			if !haveKey && s.Data[0]&0x01 != 0 {
				rp.WritePLI(track.SSRC())
				continue
			}
			img, err := dec.Decode(s.Data)
			if err != nil {
				haveKey = false
				rp.WritePLI(track.SSRC())
				continue
			}
			haveKey = true
			if img == nil {
				continue
			}
			f := Frame{At: time.Now(), Participant: rp.Identity(), Image: img}
			b.mu.Lock()
			if b.firstFrameAt.IsZero() {
				b.firstFrameAt = f.At
			}
			b.mu.Unlock()
			if b.opts.OnFrame != nil {
				b.opts.OnFrame(f)
			}
		}
	}
}

func (b *Bot) publishAudio(src Source) error {
	pcm := src.PCM.Samples
	if src.PCM.Rate != 48000 {
		var err error
		if pcm, err = resample.Mono(pcm, src.PCM.Rate, 48000); err != nil {
			return err
		}
	}
	if len(pcm) == 0 {
		return errors.New("callerbot: empty audio source")
	}
	// Half a second of silence between loops, as a person pauses.
	pcm = append(pcm, make([]int16, 24000)...)
	track, err := lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2})
	if err != nil {
		return err
	}
	enc, err := opus.NewEncoder(48000, 1)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.speaks = true
	b.mu.Unlock()
	track.OnBind(func() {
		started := b.spawn(func() {
			defer enc.Close()
			b.play(track, enc, pcm)
		})
		if !started {
			enc.Close()
		}
	})
	_, err = b.room.LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "caller-audio", Source: livekit.TrackSource_MICROPHONE})
	return err
}

// play sends one 20 ms frame per FrameDuration until the bot leaves: utterances first,
// else the loop, else silence (nextFrame). Frames are due on a fixed schedule from the
// first, so the audio keeps real time however late a wake-up is; after a stall longer
// than maxLate the schedule restarts from now rather than bursting the backlog.
func (b *Bot) play(track *lksdk.LocalTrack, enc *opus.Encoder, loop []int16) {
	const maxLate = 200 * time.Millisecond
	pkt := make([]byte, opus.MaxPacket)
	frame := make([]int16, frameSamples)
	loopPos := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		if now.Sub(due) > maxLate {
			due = now
		}
		b.nextFrame(now, frame, loop, &loopPos)
		if n, err := enc.Encode(frame, pkt); err == nil {
			_ = track.WriteSample(media.Sample{Data: append([]byte(nil), pkt[:n]...), Duration: FrameDuration}, nil)
		}
		due = due.Add(FrameDuration)
		timer.Reset(time.Until(due))
	}
}

func (b *Bot) publishVideo() error {
	const w, h, fps = 320, 180, 10
	enc, err := vp8.NewEncoder(vp8.EncoderConfig{Width: w, Height: h, FPS: fps, BitrateKbps: 200})
	if err != nil {
		return err
	}
	// A subscriber's keyframe request (PLI or FIR) is answered with the next frame, as a
	// browser's camera answers it.
	var keyAsked atomic.Bool
	track, err := lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000},
		lksdk.WithRTCPHandler(func(p rtcp.Packet) {
			switch p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				keyAsked.Store(true)
			}
		}))
	if err != nil {
		enc.Close()
		return err
	}
	track.OnBind(func() {
		started := b.spawn(func() {
			defer enc.Close()
			img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
			for i := range img.Cb {
				img.Cb[i], img.Cr[i] = 110, 140
				if t := b.opts.VideoTint; t != ([2]uint8{}) {
					img.Cb[i], img.Cr[i] = t[0], t[1]
				}
			}
			solid := b.opts.VideoColor
			if c := solid; c != nil {
				yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
				for i := range img.Y {
					img.Y[i] = yy
				}
				for i := range img.Cb {
					img.Cb[i], img.Cr[i] = cb, cr
				}
			}
			tick := time.NewTicker(time.Second / fps)
			defer tick.Stop()
			start := time.Now()
			for i := 0; ; i++ {
				if solid == nil {
					sweepBar(img, i)
				}
				key := i%(fps*2) == 0 || keyAsked.Swap(false)
				if data, _, err := enc.Encode(img, time.Since(start), key); err == nil && len(data) > 0 {
					_ = track.WriteSample(media.Sample{Data: data, Duration: time.Second / fps}, nil)
				}
				select {
				case <-b.ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
		if !started {
			enc.Close()
		}
	})
	_, err = b.room.LocalParticipant.PublishTrack(track, &lksdk.TrackPublicationOptions{Name: "caller-camera", Source: livekit.TrackSource_CAMERA, VideoWidth: w, VideoHeight: h})
	return err
}

// sweepBar paints frame i of the test pattern's luma: a bar sweeping across a grey field.
func sweepBar(img *image.YCbCr, i int) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	for y := range h {
		for x := range w {
			v := byte(90)
			if ((x-i*8)%w+w)%w < 24 {
				v = 220
			}
			img.Y[y*img.YStride+x] = v
		}
	}
}
