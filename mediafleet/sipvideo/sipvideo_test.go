package sipvideo

import (
	"math"
	"net/netip"
	"strings"
	"testing"
)

func TestG711RoundTrip(t *testing.T) {
	for _, law := range []struct {
		name string
		g    g711
		pt   uint8
	}{{"PCMU", lawOf(ptPCMU), ptPCMU}, {"PCMA", lawOf(ptPCMA), ptPCMA}} {
		for _, v := range []int16{0, 1, -1, 100, -100, 1000, -1000, 8000, -8000, 32000, -32000, 32767, -32768} {
			got := law.g.dec(law.g.enc(v))
			// G.711 keeps about 4 bits of mantissa: the error is within 1/16 of the value,
			// and a few steps near zero.
			if bound := math.Max(math.Abs(float64(v))/16, 33); math.Abs(float64(got)-float64(v)) > bound {
				t.Errorf("%s: %d came back as %d", law.name, v, got)
			}
			if v != 0 && got != 0 && (v > 0) != (got > 0) {
				t.Errorf("%s: %d came back with the other sign: %d", law.name, v, got)
			}
		}
	}
}

const baresipOffer = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
	"m=audio 27656 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n" +
	"m=video 27660 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=rtcp-fb:* nack pli\r\na=sendrecv\r\n"

func TestOfferAndAnswer(t *testing.T) {
	o, err := parseOffer([]byte(baresipOffer))
	if err != nil {
		t.Fatal(err)
	}
	if o.audioPT != ptPCMU || o.dtmfPT != 101 || o.audioAddr.Port != 27656 || o.audioRTCP.Port != 27657 {
		t.Errorf("audio %+v, want PCMU on 27656 (RTCP 27657) with telephone-event 101", o)
	}
	if o.videoAddr == nil || o.videoAddr.Port != 27660 || o.videoPT != 96 {
		t.Errorf("video %+v, want VP8 96 on 27660", o)
	}
	ans := string(answer(o, "127.0.0.1", 20000, 20002, 1))
	for _, want := range []string{"m=audio 20000 RTP/AVP 0 101", "a=rtpmap:0 PCMU/8000", "m=video 20002 RTP/AVP 96", "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack pli"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer has no %q:\n%s", want, ans)
		}
	}

	// Video in a codec the bridge does not pass (H.264 only) is refused; audio goes on.
	h264 := strings.Replace(baresipOffer, "a=rtpmap:96 VP8/90000", "a=rtpmap:96 H264/90000", 1)
	o, err = parseOffer([]byte(h264))
	if err != nil || o.videoAddr != nil || !o.videoOffered {
		t.Fatalf("H.264 offer: %+v %v, want video offered and not taken", o, err)
	}
	if ans := string(answer(o, "127.0.0.1", 20000, 0, 1)); !strings.Contains(ans, "m=video 0 RTP/AVP 96") {
		t.Errorf("answer to an H.264-only offer does not refuse its video:\n%s", ans)
	}

	// PCMA only, and no audio codec the bridge speaks.
	pcma := strings.Replace(strings.Replace(baresipOffer, "RTP/AVP 0 8 101", "RTP/AVP 8", 1), "a=rtpmap:0 PCMU/8000\r\n", "", 1)
	if o, err := parseOffer([]byte(pcma)); err != nil || o.audioPT != ptPCMA {
		t.Errorf("PCMA offer: %+v %v", o, err)
	}
	opusOnly := "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n"
	if _, err := parseOffer([]byte(opusOnly)); err == nil {
		t.Error("an offer without G.711 was taken")
	}
}

func TestPortPoolPairs(t *testing.T) {
	p := &portPool{start: 31400, end: 31403}
	a, err := p.open()
	if err != nil {
		t.Skipf("ports in use here: %v", err)
	}
	defer a.close()
	b, err := p.open()
	if err != nil {
		t.Skipf("ports in use here: %v", err)
	}
	if a.port%2 != 0 || b.port%2 != 0 || a.port == b.port {
		t.Errorf("pairs at %d and %d, want two even ports", a.port, b.port)
	}
	if c, err := p.open(); err == nil {
		c.close()
		t.Error("a third pair from a range of two")
	}
	b.close()
	c, err := p.open()
	if err != nil {
		t.Fatalf("a closed pair is not reused: %v", err)
	}
	c.close()
}

func TestAddressAllowed(t *testing.T) {
	ip := netip.MustParseAddr("203.0.113.7")
	for _, c := range []struct {
		allowed []string
		want    bool
	}{{[]string{"203.0.113.7"}, true}, {[]string{"203.0.113.0/24"}, true}, {[]string{"198.51.100.0/24"}, false}, {[]string{"bad"}, false}} {
		if got := addressAllowed(ip, c.allowed); got != c.want {
			t.Errorf("addressAllowed(%v, %v) = %v", ip, c.allowed, got)
		}
	}
}
