package sipvideo

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
	pmedia "github.com/pion/webrtc/v4/pkg/media"
	"github.com/pion/webrtc/v4/pkg/media/samplebuilder"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
)

// Audio runs at the phone's rate: Opus encodes and decodes 8 kHz directly, so nothing is
// resampled.
const (
	rate        = 8000
	frame       = rate / 50 // 20 ms
	frameDur    = 20 * time.Millisecond
	maxBuffered = rate / 5 // 200 ms of a speaker's audio waits at most
)

// media moves one call's audio and video between the phone (RTP) and the room.
type media struct {
	c   *call
	log *slog.Logger
	law g711

	audioTrack *lksdk.LocalTrack
	videoTrack *lksdk.LocalTrack

	mu        sync.Mutex
	speakers  map[string][]int16 // decoded room audio waiting, by track
	source    *videoSource       // the room video sent to the phone
	phoneSSRC uint32             // the phone's video SSRC, learned from its RTP
	firSeq    uint8
	lastKeyTS uint32 // the telephone-event last passed on (phoneAudio's alone)
	keySeen   bool   // the last FIR's sequence number

	// The phone-bound video's rewriting state: continuous sequence numbers and
	// timestamps across source switches.
	vSSRC    uint32
	vSeq     uint16
	vTS      uint32
	vStarted bool
	sawKey   bool

	stats stats

	done chan struct{}
	wg   sync.WaitGroup
}

// stats count a call's media, logged when it ends.
type stats struct {
	audioIn, audioOut, videoIn, videoOut           atomic.Int64 // packets from and to the phone
	pliToPhone, pliFromPhone, rtcpIn, keysIn, keys atomic.Int64
}

func (s *stats) attrs() []any {
	return []any{"audio_in", s.audioIn.Load(), "audio_out", s.audioOut.Load(), "video_in", s.videoIn.Load(),
		"video_out", s.videoOut.Load(), "pli_to_phone", s.pliToPhone.Load(), "pli_from_phone", s.pliFromPhone.Load(), "rtcp_in", s.rtcpIn.Load(), "keyframes_in", s.keysIn.Load(), "keys", s.keys.Load()}
}

// videoSource is one remote video track the phone is shown.
type videoSource struct {
	track *webrtc.TrackRemote
	rp    *lksdk.RemoteParticipant
	// tsOff and seqOff map the source's timestamps and sequence numbers onto the
	// phone's stream.
	tsOff    uint32
	seqOff   uint16
	anchored bool
}

func newMedia(c *call, log *slog.Logger) *media {
	return &media{c: c, log: log, law: lawOf(c.offer.audioPT), speakers: map[string][]int16{},
		vSSRC: rand.Uint32(), vSeq: uint16(rand.Uint32()), vTS: rand.Uint32(), done: make(chan struct{})}
}

func (m *media) close() {
	select {
	case <-m.done:
	default:
		close(m.done)
	}
	m.c.audio.close()
	if m.c.video != nil {
		m.c.video.close()
	}
	m.wg.Wait()
}

func (m *media) spawn(f func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}

// callback is the room's callbacks: room audio is heard, room video shown to the phone,
// and a removal from the room (Bridgeline hung up) ends the call.
func (m *media) callback() *lksdk.RoomCallback {
	cb := lksdk.NewRoomCallback()
	cb.OnTrackSubscribed = func(track *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
		switch track.Kind() {
		case webrtc.RTPCodecTypeAudio:
			m.spawn(func() { m.hear(track) })
		case webrtc.RTPCodecTypeVideo:
			if m.c.video == nil || track.Codec().MimeType != webrtc.MimeTypeVP8 {
				return
			}
			m.spawn(func() { m.show(track, rp) })
		}
	}
	cb.OnDisconnectedWithReason = func(reason lksdk.DisconnectionReason) {
		m.c.end("room: " + string(reason))
	}
	return cb
}

// publish puts the phone's microphone (Opus) and, on a video call, its camera (VP8,
// passed through) into the room.
func (m *media) publish() error {
	lp := m.c.room.LocalParticipant
	var err error
	m.audioTrack, err = lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2})
	if err != nil {
		return err
	}
	if _, err := lp.PublishTrack(m.audioTrack, &lksdk.TrackPublicationOptions{Name: "phone-audio", Source: livekit.TrackSource_MICROPHONE}); err != nil {
		return err
	}
	if m.c.video == nil {
		return nil
	}
	m.videoTrack, err = lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000,
		RTCPFeedback: []webrtc.RTCPFeedback{{Type: "nack", Parameter: "pli"}, {Type: "ccm", Parameter: "fir"}}},
		lksdk.WithRTCPHandler(m.fromRoomRTCP))
	if err != nil {
		return err
	}
	_, err = lp.PublishTrack(m.videoTrack, &lksdk.TrackPublicationOptions{Name: "phone-camera", Source: livekit.TrackSource_CAMERA,
		VideoWidth: 352, VideoHeight: 288})
	return err
}

// start runs the phone's side: its audio and video into the room, the room's audio to it.
// What the phone is shown starts at a keyframe, asked for now.
func (m *media) start() {
	m.mu.Lock()
	m.sawKey = false
	src := m.source
	m.mu.Unlock()
	if src != nil {
		src.rp.WritePLI(src.track.SSRC())
	}
	m.spawn(m.phoneAudio)
	m.spawn(func() { m.phoneRTCP(m.c.audio) })
	m.spawn(m.speak)
	if m.c.video != nil {
		m.spawn(m.phoneVideo)
		m.spawn(func() { m.phoneRTCP(m.c.video) })
	}
}

// phoneAudio decodes the phone's G.711 and publishes it as Opus, 20 ms at a time.
func (m *media) phoneAudio() {
	enc, err := opus.NewEncoder(rate, 1)
	if err != nil {
		m.log.Error("video call: opus encoder", "err", err)
		return
	}
	defer enc.Close()
	buf := make([]byte, 1500)
	out := make([]byte, opus.MaxPacket)
	var pending []int16
	var pkt rtp.Packet
	s := m.c.audio
	for {
		n, from, err := s.rtp.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if isRTCP(buf[:n]) || pkt.Unmarshal(buf[:n]) != nil {
			continue
		}
		s.latch(from)
		if m.c.offer.dtmfPT != 0 && pkt.PayloadType == m.c.offer.dtmfPT {
			m.keypad(&pkt)
			continue
		}
		if pkt.PayloadType != m.c.offer.audioPT {
			continue // comfort noise is not bridged
		}
		m.stats.audioIn.Add(1)
		for _, b := range pkt.Payload {
			pending = append(pending, m.law.dec(b))
		}
		for len(pending) >= frame {
			if k, err := enc.Encode(pending[:frame], out); err == nil {
				m.audioTrack.WriteSample(pmedia.Sample{Data: append([]byte(nil), out[:k]...), Duration: frameDur}, nil)
			}
			pending = pending[frame:]
		}
	}
}

// dtmfKeys are RFC 4733's events 0-15.
const dtmfKeys = "0123456789*#ABCD"

// keypad passes a key the phone pressed (an RFC 4733 telephone-event) to the room as
// LiveKit's SIP bridge does, a SipDTMF data packet, once per key: at the event's first
// packet with its end bit (the end is sent three times).
func (m *media) keypad(pkt *rtp.Packet) {
	if len(pkt.Payload) < 4 || pkt.Payload[1]&0x80 == 0 || int(pkt.Payload[0]) >= len(dtmfKeys) {
		return
	}
	if m.lastKeyTS == pkt.Timestamp && m.keySeen {
		return
	}
	m.lastKeyTS, m.keySeen = pkt.Timestamp, true
	key := dtmfKeys[pkt.Payload[0]]
	err := m.c.room.LocalParticipant.PublishDataPacket(&livekit.SipDTMF{Code: uint32(pkt.Payload[0]), Digit: string(key)},
		lksdk.WithDataPublishReliable(true))
	if err != nil {
		m.log.Warn("video call: key not passed on", "err", err)
	}
	m.stats.keys.Add(1)
}

// hear decodes one room audio track at 8 kHz into its speaker's buffer.
func (m *media) hear(track *webrtc.TrackRemote) {
	if track.Codec().MimeType != webrtc.MimeTypeOpus {
		return
	}
	dec, err := opus.NewDecoder(rate, 1)
	if err != nil {
		return
	}
	defer dec.Close()
	id := track.ID()
	pcm := make([]int16, dec.MaxFrame())
	defer func() {
		m.mu.Lock()
		delete(m.speakers, id)
		m.mu.Unlock()
	}()
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			return
		}
		if len(pkt.Payload) == 0 {
			continue
		}
		n, err := dec.Decode(pkt.Payload, pcm)
		if err != nil {
			continue
		}
		m.mu.Lock()
		b := append(m.speakers[id], pcm[:n]...)
		if len(b) > maxBuffered {
			b = b[len(b)-maxBuffered:]
		}
		m.speakers[id] = b
		m.mu.Unlock()
	}
}

// speak sends the room's audio, every speaker mixed, to the phone: one G.711 packet per
// 20 ms on a fixed schedule.
func (m *media) speak() {
	p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: m.c.offer.audioPT, SSRC: rand.Uint32(),
		SequenceNumber: uint16(rand.Uint32()), Timestamp: rand.Uint32()}}
	mix := make([]int32, frame)
	payload := make([]byte, frame)
	tick := time.NewTicker(frameDur)
	defer tick.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-m.c.ended:
			return
		case <-tick.C:
		}
		clear(mix)
		m.mu.Lock()
		for id, b := range m.speakers {
			k := min(len(b), frame)
			for i := range k {
				mix[i] += int32(b[i])
			}
			m.speakers[id] = b[k:]
		}
		m.mu.Unlock()
		for i, v := range mix {
			payload[i] = m.law.enc(int16(max(-32768, min(32767, v))))
		}
		p.Payload = payload
		if raw, err := p.Marshal(); err == nil {
			m.c.audio.send(raw)
			m.stats.audioOut.Add(1)
		}
		p.SequenceNumber++
		p.Timestamp += frame
	}
}

// phoneVideo passes the phone's VP8 into the room: its packets are reassembled into
// frames, which are sent on as they are (no transcoding), packetised afresh for WebRTC.
func (m *media) phoneVideo() {
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	s := m.c.video
	sb := samplebuilder.New(256, &codecs.VP8Packet{}, 90000)
	for {
		n, from, err := s.rtp.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if isRTCP(buf[:n]) {
			m.fromPhoneRTCP(buf[:n])
			continue
		}
		if pkt.Unmarshal(buf[:n]) != nil || pkt.PayloadType != m.c.offer.videoPT {
			continue
		}
		s.latch(from)
		m.mu.Lock()
		m.phoneSSRC = pkt.SSRC
		m.mu.Unlock()
		m.stats.videoIn.Add(1)
		if isKeyframe(pkt.Payload) {
			m.stats.keysIn.Add(1)
		}
		// The builder keeps what it is given: a packet of its own, off the read buffer.
		own := &rtp.Packet{Header: pkt.Header, Payload: append([]byte(nil), pkt.Payload...)}
		own.Extension, own.Extensions, own.CSRC = false, nil, nil
		sb.Push(own)
		for f := sb.Pop(); f != nil; f = sb.Pop() {
			if len(f.Data) > 0 {
				m.videoTrack.WriteSample(pmedia.Sample{Data: f.Data, Duration: f.Duration}, nil)
			}
		}
	}
}

// phoneRTCP reads a stream's RTCP port: keyframe requests on video.
func (m *media) phoneRTCP(s *stream) {
	buf := make([]byte, 1500)
	for {
		n, _, err := s.rtcp.ReadFromUDP(buf)
		if err != nil {
			return
		}
		m.stats.rtcpIn.Add(1)
		if s == m.c.video {
			m.fromPhoneRTCP(buf[:n])
		}
	}
}

// fromPhoneRTCP: the phone asks for a keyframe (PLI or FIR) of what it is shown; the
// request goes to the publisher of that video.
func (m *media) fromPhoneRTCP(b []byte) {
	pkts, err := rtcp.Unmarshal(b)
	if err != nil {
		return
	}
	for _, p := range pkts {
		switch p.(type) {
		case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
			m.stats.pliFromPhone.Add(1)
			m.mu.Lock()
			src := m.source
			m.mu.Unlock()
			if src != nil {
				src.rp.WritePLI(src.track.SSRC())
			}
		}
	}
}

// fromRoomRTCP: a subscriber of the phone's camera asks for a keyframe; the phone is asked.
func (m *media) fromRoomRTCP(p rtcp.Packet) {
	switch p.(type) {
	case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
	default:
		return
	}
	m.mu.Lock()
	ssrc := m.phoneSSRC
	m.firSeq++
	seq := m.firSeq
	m.mu.Unlock()
	// Both forms: a phone may act on one only.
	raw, err := rtcp.Marshal([]rtcp.Packet{&rtcp.PictureLossIndication{SenderSSRC: m.vSSRC, MediaSSRC: ssrc},
		&rtcp.FullIntraRequest{SenderSSRC: m.vSSRC, MediaSSRC: ssrc, FIR: []rtcp.FIREntry{{SSRC: ssrc, SequenceNumber: seq}}}})
	if err == nil && m.c.video != nil {
		m.c.video.sendRTCP(raw)
		m.stats.pliToPhone.Add(1)
	}
}

// show sends one room video track to the phone. The latest track subscribed is shown:
// the persona's avatar, or on a human session the customer's camera; a keyframe is asked
// for until one has passed, so the phone's picture starts at once.
func (m *media) show(track *webrtc.TrackRemote, rp *lksdk.RemoteParticipant) {
	src := &videoSource{track: track, rp: rp}
	m.mu.Lock()
	m.source, m.sawKey = src, false
	m.mu.Unlock()
	rp.WritePLI(track.SSRC())
	lastPLI := time.Now()
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			m.mu.Lock()
			if m.source == src {
				m.source = nil
			}
			m.mu.Unlock()
			return
		}
		if len(pkt.Payload) == 0 {
			continue // padding
		}
		m.mu.Lock()
		if m.source != src {
			m.mu.Unlock()
			return
		}
		key := isKeyframe(pkt.Payload)
		if !m.sawKey {
			if !key {
				m.mu.Unlock()
				if time.Since(lastPLI) > 300*time.Millisecond {
					rp.WritePLI(track.SSRC())
					lastPLI = time.Now()
				}
				continue
			}
			m.sawKey = true
		}
		if !src.anchored {
			// The first packet of a source continues the phone's stream 1/30 s on.
			step := uint32(3000)
			if !m.vStarted {
				step = 0
			}
			src.tsOff = m.vTS + step - pkt.Timestamp
			src.seqOff = m.vSeq + 1 - pkt.SequenceNumber
			src.anchored, m.vStarted = true, true
		}
		out := rtp.Packet{Header: rtp.Header{Version: 2, Marker: pkt.Marker, PayloadType: m.c.offer.videoPT, SSRC: m.vSSRC,
			SequenceNumber: pkt.SequenceNumber + src.seqOff, Timestamp: pkt.Timestamp + src.tsOff}, Payload: pkt.Payload}
		m.vSeq, m.vTS = out.SequenceNumber, out.Timestamp
		m.mu.Unlock()
		if raw, err := out.Marshal(); err == nil {
			m.c.video.send(raw)
			m.stats.videoOut.Add(1)
		}
	}
}

// isKeyframe says whether a VP8 RTP payload starts a keyframe.
func isKeyframe(payload []byte) bool {
	var vp8 codecs.VP8Packet
	if _, err := vp8.Unmarshal(payload); err != nil || vp8.S != 1 || vp8.PID != 0 || len(vp8.Payload) == 0 {
		return false
	}
	return vp8.Payload[0]&0x01 == 0
}

// isRTCP tells RTCP from RTP on a muxed port (RFC 5761: payload types 64-95 after the
// marker bit are RTCP's 192-223).
func isRTCP(b []byte) bool {
	return len(b) >= 2 && b[1] >= 192 && b[1] <= 223
}
