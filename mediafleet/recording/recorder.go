// Package recording records an assistant call as the persona worker hears and speaks it:
// one Ogg Opus file, two channels, the caller on the left and the assistant on the
// right, both placed on the call's own clock (the time from the recording's start), so
// that a sound at second 12 of the file was heard or said 12 s after it.
package recording

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
)

// The file's audio: 16 kHz (wideband, what the caller's side is decoded at and speech
// needs), stereo, 20 ms packets.
const (
	Rate      = 16000
	Channels  = 2
	frameLen  = Rate / 50 // 320 samples a channel
	frameDur  = 20 * time.Millisecond
	Format    = "ogg_opus"
	MediaType = "audio/ogg"
	// Bitrate of the two streams together: 24 kbit/s each, transparent for wideband
	// speech (about 22 MB an hour).
	Bitrate = 48000
)

// Channel is one side of the call.
type Channel int

// The two channels, in the file's order.
const (
	Caller    Channel = 0 // left
	Assistant Channel = 1 // right
)

// Alignment of what each side hands in to the recording's clock.
const (
	// slack is how far a side's audio may fall behind its place on the clock before the
	// gap is filled with silence: above the scheduling and network jitter of audio that
	// keeps its own timing (the listener fills the caller's gaps from the RTP clock, the
	// speaker sends a frame every 20 ms), below anything a listener would notice.
	slack = 120 * time.Millisecond
	// maxLag is how far one side may stay behind the other's audio (a caller whose track
	// has not arrived yet) before it is filled with silence so the file goes on being
	// written: the memory the recorder holds is bounded by it.
	maxLag = 500 * time.Millisecond
)

// Each side is its own mono Opus stream in the file (channel mapping family 1, two
// streams, none coupled): a stereo pair coded jointly lets a sudden sound of one side
// leak into the other for a frame, at -10 dB.
//
// Recorder writes a call's two sides to one Ogg Opus stream as they come. It is safe
// for concurrent use: each side writes from its own goroutine.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	enc   *opus.SplitEncoder
	ogg   *oggWriter
	ch    [Channels]side
	pkt   []byte
	pcm   []int16
	// frames is how many 20 ms frames were written.
	frames int
	err    error
	closed bool
}

// side is one channel's audio not yet encoded, and how much it has had in all.
type side struct {
	pending []int16
	total   int64 // samples handed in, silence filled in included
	started bool
}

// Info is what a finished recording holds.
type Info struct {
	Duration time.Duration
	Bytes    int64
}

// New starts a recording whose second zero is start, written to w.
func New(w io.Writer, start time.Time) (*Recorder, error) {
	enc, err := opus.NewSplitEncoder(Rate, Channels)
	if err != nil {
		return nil, err
	}
	look, err := enc.Lookahead()
	if err == nil {
		err = enc.SetBitrate(Bitrate)
	}
	if err != nil {
		enc.Close()
		return nil, err
	}
	var serial [4]byte
	_, _ = rand.Read(serial[:])
	ogg, err := newOggWriter(w, binary.LittleEndian.Uint32(serial[:]), opusHead(look*48000/Rate, Rate))
	if err != nil {
		enc.Close()
		return nil, fmt.Errorf("recording: write headers: %w", err)
	}
	return &Recorder{start: start, enc: enc, ogg: ogg, pkt: make([]byte, opus.MaxPacket), pcm: make([]int16, frameLen*Channels)}, nil
}

// Write hands in one side's audio: pcm, mono at rate (Rate, or a multiple of it), whose
// first sample was heard or played at at.
func (r *Recorder) Write(ch Channel, pcm []int16, rate int, at time.Time) {
	if rate != Rate {
		pcm = decimate(pcm, rate/Rate)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil {
		return
	}
	s := &r.ch[ch]
	place := r.sample(at)
	if place < 0 { // before second zero: only what comes after it
		if int64(len(pcm)) <= -place {
			return
		}
		pcm, place = pcm[-place:], 0
	}
	if gap := place - s.total; gap > 0 && (!s.started || gap > int64(slack*Rate/time.Second)) {
		s.fill(gap)
	}
	s.started = true
	s.pending = append(s.pending, pcm...)
	s.total += int64(len(pcm))
	// The other side may not lag too far behind: it gets silence up to maxLag behind.
	o := &r.ch[1-ch]
	if floor := place - int64(maxLag*Rate/time.Second); o.total < floor {
		o.fill(floor - o.total)
		o.started = true
	}
	r.encode()
}

func (s *side) fill(n int64) {
	s.pending = append(s.pending, make([]int16, n)...)
	s.total += n
}

// sample is at's place on the recording's clock, in samples.
func (r *Recorder) sample(at time.Time) int64 {
	return int64(at.Sub(r.start) * Rate / time.Second)
}

// encode writes every frame both sides have; r.mu held.
func (r *Recorder) encode() {
	for len(r.ch[0].pending) >= frameLen && len(r.ch[1].pending) >= frameLen {
		for i := range frameLen {
			r.pcm[2*i], r.pcm[2*i+1] = r.ch[0].pending[i], r.ch[1].pending[i]
		}
		r.ch[0].pending, r.ch[1].pending = r.ch[0].pending[frameLen:], r.ch[1].pending[frameLen:]
		n, err := r.enc.Encode(r.pcm, r.pkt)
		if err == nil {
			err = r.ogg.packet(r.pkt[:n], frameLen*48000/Rate)
		}
		if err != nil {
			r.err = fmt.Errorf("recording: %w", err)
			return
		}
		r.frames++
	}
	// Keep the unencoded rest compact (its slice would otherwise only grow).
	for i := range r.ch {
		if cap(r.ch[i].pending) > 4*Rate && len(r.ch[i].pending) < Rate {
			r.ch[i].pending = append([]int16(nil), r.ch[i].pending...)
		}
	}
}

// Close ends the recording at end: both sides are filled with silence up to it (or up to
// the longer of them, if later), the last frame is padded, and the stream is closed.
// Nothing written after Close is kept.
func (r *Recorder) Close(end time.Time) (Info, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Info{}, errors.New("recording: closed twice")
	}
	r.closed = true
	defer r.enc.Close()
	if r.err != nil {
		return Info{}, r.err
	}
	last := max(r.sample(end), r.ch[0].total, r.ch[1].total)
	last = (last + frameLen - 1) / frameLen * frameLen
	for i := range r.ch {
		r.ch[i].fill(last - r.ch[i].total)
	}
	r.encode()
	if r.err != nil {
		return Info{}, r.err
	}
	if err := r.ogg.close(); err != nil {
		return Info{}, fmt.Errorf("recording: %w", err)
	}
	return Info{Duration: time.Duration(r.frames) * frameDur, Bytes: r.ogg.n}, nil
}

// decimate takes every factor-th sample's neighbourhood average: a simple low-pass
// before dropping the rate (the assistant's 48 kHz speech to the file's 16 kHz).
func decimate(pcm []int16, factor int) []int16 {
	if factor <= 1 {
		return pcm
	}
	out := make([]int16, len(pcm)/factor)
	for i := range out {
		var sum int
		for _, v := range pcm[i*factor : (i+1)*factor] {
			sum += int(v)
		}
		out[i] = int16(sum / factor)
	}
	return out
}

// Decode reads an Ogg Opus recording made by Recorder and returns its two channels at Rate, the pre-skip dropped.
func Decode(r io.Reader) (left, right []int16, err error) {
	packets, err := readOgg(r)
	if err != nil {
		return nil, nil, err
	}
	if len(packets) < 2 || len(packets[0]) < 19 || string(packets[0][:8]) != "OpusHead" {
		return nil, nil, errors.New("recording: not an Ogg Opus stream")
	}
	head := packets[0]
	if len(head) != 23 || head[9] != Channels || head[18] != 1 || head[19] != Channels || head[20] != 0 {
		return nil, nil, errors.New("recording: not two uncoupled channels (mapping family 1)")
	}
	skip := int(binary.LittleEndian.Uint16(head[10:])) * Rate / 48000
	dec, err := opus.NewSplitDecoder(Rate, Channels)
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	pcm := make([]int16, dec.MaxFrame()*Channels)
	for _, p := range packets[2:] {
		n, err := dec.Decode(p, pcm)
		if err != nil {
			return nil, nil, err
		}
		for i := range n {
			left, right = append(left, pcm[2*i]), append(right, pcm[2*i+1])
		}
	}
	skip = min(skip, len(left))
	return left[skip:], right[skip:], nil
}
