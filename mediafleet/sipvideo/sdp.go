package sipvideo

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pion/sdp/v3"
)

// Payload types the bridge answers with when the offer gives none of its own.
const (
	ptPCMU = 0
	ptPCMA = 8
)

// offer is what the bridge takes from a phone's SDP offer.
type offer struct {
	// audioAddr is where the phone receives audio; audioPT the G.711 payload type chosen
	// (PCMU preferred), dtmfPT telephone-event's (0: none offered).
	audioAddr *net.UDPAddr
	audioPT   uint8
	dtmfPT    uint8
	// videoAddr is where the phone receives video, nil when it offered none (or a port
	// of 0, or no codec the bridge passes through); videoPT is VP8's payload type in the
	// offer. videoOffered says an m=video line was there at all (it is then answered,
	// with port 0 when refused).
	videoAddr    *net.UDPAddr
	videoPT      uint8
	videoOffered bool
	videoFormats []string // the offer's m=video formats, to refuse it with
	// rtcpMux: the phone sends RTCP on the RTP port (a=rtcp-mux).
	audioRTCPMux, videoRTCPMux bool
	audioRTCP, videoRTCP       *net.UDPAddr
}

// parseOffer reads a phone's offer: one audio stream with PCMU or PCMA is required; a
// video stream is taken when it offers VP8.
func parseOffer(body []byte) (offer, error) {
	var o offer
	var sd sdp.SessionDescription
	if err := sd.Unmarshal(body); err != nil {
		return o, fmt.Errorf("sdp: %w", err)
	}
	sessionIP := ""
	if sd.ConnectionInformation != nil && sd.ConnectionInformation.Address != nil {
		sessionIP = sd.ConnectionInformation.Address.Address
	}
	for _, m := range sd.MediaDescriptions {
		ip := sessionIP
		if m.ConnectionInformation != nil && m.ConnectionInformation.Address != nil {
			ip = m.ConnectionInformation.Address.Address
		}
		switch m.MediaName.Media {
		case "audio":
			if o.audioAddr != nil {
				continue
			}
			pt, ok := pickCodec(m, "PCMU", 8000, ptPCMU)
			if !ok {
				if pt, ok = pickCodec(m, "PCMA", 8000, ptPCMA); !ok {
					continue
				}
			}
			addr, err := udpAddr(ip, m.MediaName.Port.Value)
			if err != nil {
				return o, err
			}
			o.audioAddr, o.audioPT = addr, pt
			if dt, ok := pickCodec(m, "telephone-event", 8000, 255); ok && dt != 255 {
				o.dtmfPT = dt
			}
			o.audioRTCPMux = hasAttr(m, "rtcp-mux")
			o.audioRTCP = rtcpAddr(m, ip, addr)
		case "video":
			if o.videoOffered {
				continue
			}
			o.videoOffered = true
			o.videoFormats = m.MediaName.Formats
			if m.MediaName.Port.Value == 0 {
				continue
			}
			pt, ok := pickCodec(m, "VP8", 90000, 255)
			if !ok || pt == 255 {
				continue
			}
			addr, err := udpAddr(ip, m.MediaName.Port.Value)
			if err != nil {
				return o, err
			}
			o.videoAddr, o.videoPT = addr, pt
			o.videoRTCPMux = hasAttr(m, "rtcp-mux")
			o.videoRTCP = rtcpAddr(m, ip, addr)
		}
	}
	if o.audioAddr == nil {
		return o, errors.New("sdp: no audio stream with PCMU or PCMA")
	}
	return o, nil
}

// pickCodec finds codec name/rate among m's formats: its payload type from an rtpmap, or
// static when the format list holds it without one (the static G.711 types).
func pickCodec(m *sdp.MediaDescription, name string, rate int, static uint8) (uint8, bool) {
	mapped := map[string]bool{}
	for _, a := range m.Attributes {
		if a.Key != "rtpmap" {
			continue
		}
		pt, enc, _ := strings.Cut(a.Value, " ")
		mapped[pt] = true
		codec, r, _ := strings.Cut(enc, "/")
		clock, _, _ := strings.Cut(r, "/")
		if strings.EqualFold(codec, name) && clock == strconv.Itoa(rate) && inFormats(m, pt) {
			n, err := strconv.Atoi(pt)
			if err == nil && n >= 0 && n < 128 {
				return uint8(n), true
			}
		}
	}
	s := strconv.Itoa(int(static))
	if static < 96 && !mapped[s] && inFormats(m, s) {
		return static, true
	}
	return 0, false
}

func inFormats(m *sdp.MediaDescription, pt string) bool {
	for _, f := range m.MediaName.Formats {
		if f == pt {
			return true
		}
	}
	return false
}

func hasAttr(m *sdp.MediaDescription, key string) bool {
	_, ok := m.Attribute(key)
	return ok
}

// rtcpAddr is where a stream's RTCP goes: a=rtcp's port (and address), else RTP's port
// plus one.
func rtcpAddr(m *sdp.MediaDescription, ip string, rtpAddr *net.UDPAddr) *net.UDPAddr {
	if v, ok := m.Attribute("rtcp"); ok {
		f := strings.Fields(v)
		if p, err := strconv.Atoi(f[0]); err == nil && p > 0 && p < 65536 {
			if len(f) == 4 {
				ip = f[3]
			}
			if a, err := udpAddr(ip, p); err == nil {
				return a
			}
		}
	}
	return &net.UDPAddr{IP: rtpAddr.IP, Port: rtpAddr.Port + 1}
}

func udpAddr(ip string, port int) (*net.UDPAddr, error) {
	a := net.ParseIP(ip)
	if a == nil || port <= 0 || port > 65535 {
		return nil, fmt.Errorf("sdp: no usable address %q port %d", ip, port)
	}
	return &net.UDPAddr{IP: a, Port: port}, nil
}

// answer is the bridge's SDP answer: audio with the offer's G.711 type (and
// telephone-event), video with VP8 when videoPort is not zero, else the offered video
// refused with port 0.
func answer(o offer, ip string, audioPort, videoPort int, sessID uint64) []byte {
	var b strings.Builder
	now := strconv.FormatInt(time.Now().Unix(), 10)
	fmt.Fprintf(&b, "v=0\r\no=bridgeline %d %s IN IP4 %s\r\ns=bridgeline\r\nc=IN IP4 %s\r\nt=0 0\r\n", sessID, now, ip, ip)
	formats := strconv.Itoa(int(o.audioPT))
	if o.dtmfPT != 0 {
		formats += " " + strconv.Itoa(int(o.dtmfPT))
	}
	fmt.Fprintf(&b, "m=audio %d RTP/AVP %s\r\n", audioPort, formats)
	name := "PCMU"
	if o.audioPT == ptPCMA {
		name = "PCMA"
	}
	fmt.Fprintf(&b, "a=rtpmap:%d %s/8000\r\n", o.audioPT, name)
	if o.dtmfPT != 0 {
		fmt.Fprintf(&b, "a=rtpmap:%d telephone-event/8000\r\na=fmtp:%d 0-16\r\n", o.dtmfPT, o.dtmfPT)
	}
	b.WriteString("a=ptime:20\r\na=sendrecv\r\n")
	switch {
	case videoPort != 0:
		fmt.Fprintf(&b, "m=video %d RTP/AVP %d\r\n", videoPort, o.videoPT)
		fmt.Fprintf(&b, "a=rtpmap:%d VP8/90000\r\n", o.videoPT)
		fmt.Fprintf(&b, "a=rtcp-fb:%d nack pli\r\na=rtcp-fb:%d ccm fir\r\n", o.videoPT, o.videoPT)
		b.WriteString("a=sendrecv\r\n")
	case o.videoOffered:
		f := "96"
		if len(o.videoFormats) > 0 {
			f = o.videoFormats[0]
		}
		fmt.Fprintf(&b, "m=video 0 RTP/AVP %s\r\n", f)
	}
	return []byte(b.String())
}
