package sipvideo

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	sipplatform "github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// joinWait bounds the join through the gateway, which holds it while the control plane
// decides (its own bound is 40 s).
const joinWait = 45 * time.Second

// dialog is a call's SIP dialog, whichever side placed it.
type dialog interface {
	Context() context.Context
	Bye(ctx context.Context) error
	Close() error
}

// call is one bridged call.
type call struct {
	b         *Bridge
	srv       *sipgo.DialogServerSession // an inbound call's
	cli       *sipgo.DialogClientSession // a dialled call's
	dlg       dialog                     // either, once answered
	sipCallID string
	pcid      string // the bridge's call id (sip.callID)
	from, to  string
	trunk     rtc.SIPInboundTrunk
	rule      rtc.SIPDispatchRule
	offer     offer

	audio, video *stream
	room         *lksdk.Room
	settled      chan struct{} // closed once the INVITE has its final answer
	settleOnce   sync.Once
	sdpAnswer    []byte

	endOnce sync.Once
	ended   chan struct{}
	why     string
	removed bool // the room ended the call (Bridgeline hung up)
	mu      sync.Mutex
}

// run joins the call's room, answers, bridges media until either side ends it.
func (c *call) run() {
	log := c.b.log.With("platform_call_id", c.pcid)
	settle := func() { c.settleOnce.Do(func() { close(c.settled) }) }
	defer settle()
	fail := func(code int, reason string) {
		c.srv.Respond(code, reason, nil)
		settle()
		c.srv.Close()
	}
	var err error
	if c.audio, err = c.b.ports.open(); err != nil {
		log.Error("video call: no RTP port", "err", err)
		fail(sip.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	if c.offer.videoAddr != nil {
		if c.video, err = c.b.ports.open(); err != nil {
			log.Error("video call: no RTP port for video", "err", err)
			c.audio.close()
			fail(sip.StatusServiceUnavailable, "Service Unavailable")
			return
		}
	}
	c.audio.setRemote(c.offer.audioAddr, c.offer.audioRTCP, c.offer.audioRTCPMux)
	if c.video != nil {
		c.video.setRemote(c.offer.videoAddr, c.offer.videoRTCP, c.offer.videoRTCPMux)
	}
	m := newMedia(c, log)
	defer m.close() // the ports too

	token, err := c.joinToken()
	if err != nil {
		log.Error("video call: join token", "err", err)
		fail(sip.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	type joined struct {
		room *lksdk.Room
		err  error
	}
	done := make(chan joined, 1)
	go func() {
		r, err := lksdk.ConnectToRoomWithToken(c.b.cfg.GatewayURL, token, m.callback(),
			lksdk.WithAutoSubscribe(true), lksdk.WithConnectTimeout(joinWait))
		done <- joined{r, err}
	}()
	var j joined
	select {
	case j = <-done:
	case <-c.srv.Context().Done():
		// The caller gave up (CANCEL) while the control plane decided.
		log.Info("video call cancelled while ringing")
		if j = <-done; j.room != nil {
			j.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
		}
		return
	}
	if j.err != nil {
		// The gateway refuses a call the control plane refused (no such line, declined,
		// busy) or could not route: Busy Here, as LiveKit's SIP bridge answers both.
		log.Info("video call not joined", "err", j.err)
		fail(sip.StatusBusyHere, "Busy Here")
		return
	}
	c.room = j.room
	if err := m.publish(); err != nil {
		log.Error("video call: publish", "err", err)
		c.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
		fail(sip.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	videoPort := 0
	if c.video != nil {
		videoPort = c.video.port
	}
	c.sdpAnswer = answer(c.offer, c.b.cfg.MediaIP, c.audio.port, videoPort, uint64(time.Now().UnixNano()))
	err = c.srv.RespondSDP(c.sdpAnswer)
	settle()
	if err != nil {
		log.Warn("video call: answer not sent", "err", err)
		c.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
		return
	}
	log.Info("video call answered", "room", c.room.Name(), "video", c.video != nil)
	c.dlg = c.srv
	c.serve(m, log, "video")
}

// serve bridges an answered call's media until the phone hangs up (BYE), the room ends
// the call (Bridgeline hung up: a BYE to the phone) or the bridge stops.
func (c *call) serve(m *media, log *slog.Logger, media string) {
	c.room.LocalParticipant.SetAttributes(map[string]string{rtc.AttrSIPCallStatus: "active", sipplatform.AttrMedia: media})
	m.start()
	select {
	case <-c.dlg.Context().Done():
		c.end("the phone hung up")
		c.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
	case <-c.ended:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.dlg.Bye(ctx)
		cancel()
		c.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
	case <-c.b.ctx.Done():
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.dlg.Bye(ctx)
		cancel()
		c.room.DisconnectWithReason(livekit.DisconnectReason_CLIENT_INITIATED)
	}
	c.dlg.Close()
	c.mu.Lock()
	why := c.why
	c.mu.Unlock()
	log.Info("video call ended", append([]any{"why", why}, m.stats.attrs()...)...)
}

// end marks the call over for why (the first reason counts).
func (c *call) end(why string) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.why = why
		c.mu.Unlock()
		close(c.ended)
	})
}

// joinToken is the SIP participant's join token for the call's dispatch room, with the
// attributes LiveKit's SIP bridge gives its participants, and the media the call
// carries for the control plane.
func (c *call) joinToken() (string, error) {
	t := true
	media := "audio"
	if c.video != nil {
		media = "video"
	}
	room := roomFor(c.rule, c.from)
	claims := lktoken.Claims{Name: "Phone " + c.from, Kind: string(rtc.KindSIP),
		Video: &lktoken.VideoGrant{RoomJoin: true, Room: room, CanPublish: &t, CanSubscribe: &t, CanPublishData: &t, CanUpdateOwnMetadata: &t},
		Attributes: map[string]string{
			rtc.AttrSIPCallID: c.pcid, rtc.AttrSIPTrunkID: c.trunk.ID, rtc.AttrSIPRuleID: c.rule.ID,
			rtc.AttrSIPPhoneNumber: c.from, rtc.AttrSIPTrunkNumber: c.to, rtc.AttrSIPCallStatus: "ringing",
			sipplatform.AttrMedia: media,
		}}
	claims.Subject = "sip_" + c.from
	return lktoken.Sign(c.b.cfg.APIKey, c.b.cfg.APISecret, claims, time.Now(), 10*time.Minute)
}

// reinvite answers a re-INVITE within the call (a session refresh, a hold, video
// dropped): the phone's new addresses are taken; video the call did not start with is
// not added (its m-line is refused with port 0).
func (c *call) reinvite(req *sip.Request, tx sip.ServerTransaction) {
	of, err := parseOffer(req.Body())
	if err != nil {
		tx.Respond(sip.NewResponseFromRequest(req, sip.StatusNotAcceptableHere, "Not Acceptable Here", nil))
		return
	}
	videoPort := 0
	if c.video != nil && of.videoAddr != nil {
		videoPort = c.video.port
		c.video.setRemote(of.videoAddr, of.videoRTCP, of.videoRTCPMux)
	} else if c.video != nil {
		c.video.setRemote(nil, nil, false) // video dropped: nothing is sent to the phone
	}
	if c.audio != nil {
		c.audio.setRemote(of.audioAddr, of.audioRTCP, of.audioRTCPMux)
	}
	body := answer(of, c.b.cfg.MediaIP, c.audio.port, videoPort, uint64(time.Now().UnixNano()))
	res := sip.NewResponseFromRequest(req, sip.StatusOK, "OK", body)
	res.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	res.AppendHeader(&sip.ContactHeader{Address: sip.Uri{Host: c.b.cfg.MediaIP, Port: c.b.addr.Port}})
	tx.Respond(res)
}

// stream is one RTP port pair (RTP and RTCP) of a call, and where the phone receives.
type stream struct {
	port       int
	rtp, rtcp  *net.UDPConn
	mu         sync.Mutex
	remote     *net.UDPAddr
	remoteRTCP *net.UDPAddr
	latched    bool
}

func (s *stream) setRemote(rtp, rtcp *net.UDPAddr, mux bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remote, s.remoteRTCP, s.latched = rtp, rtcp, false
	if mux {
		s.remoteRTCP = rtp
	}
}

// latch takes the source of what the phone sends as where it receives (symmetric RTP,
// for phones behind NAT), once per remote.
func (s *stream) latch(from *net.UDPAddr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latched || s.remote == nil || from == nil {
		return
	}
	s.latched = true
	if !from.IP.Equal(s.remote.IP) || from.Port != s.remote.Port {
		s.remote = from
	}
}

func (s *stream) send(b []byte) {
	s.mu.Lock()
	to := s.remote
	s.mu.Unlock()
	if to != nil {
		s.rtp.WriteToUDP(b, to)
	}
}

func (s *stream) sendRTCP(b []byte) {
	s.mu.Lock()
	to := s.remoteRTCP
	s.mu.Unlock()
	if to != nil {
		s.rtcp.WriteToUDP(b, to)
	}
}

func (s *stream) close() {
	s.rtp.Close()
	s.rtcp.Close()
}

// portPool opens RTP/RTCP port pairs (an even port and the next) within a range.
type portPool struct {
	start, end int
	ip         net.IP
	mu         sync.Mutex
	next       int
}

func (p *portPool) open() (*stream, error) {
	if p.start <= 0 || p.end <= p.start {
		for range 50 {
			if s, err := p.pair(0); err == nil {
				return s, nil
			}
		}
		return nil, errors.New("sipvideo: no free RTP port pair")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for range (p.end - p.start) / 2 {
		if p.next < p.start || p.next+1 > p.end {
			p.next = p.start + p.start%2
		}
		port := p.next
		p.next += 2
		if s, err := p.pair(port); err == nil {
			return s, nil
		}
	}
	return nil, errors.New("sipvideo: RTP port range exhausted")
}

// pair binds port for RTP (0: a free one) and the next one for RTCP.
func (p *portPool) pair(port int) (*stream, error) {
	rtp, err := net.ListenUDP("udp", &net.UDPAddr{IP: p.ip, Port: port})
	if err != nil {
		return nil, err
	}
	port = rtp.LocalAddr().(*net.UDPAddr).Port
	rtcp, err := net.ListenUDP("udp", &net.UDPAddr{IP: p.ip, Port: port + 1})
	if err != nil {
		rtp.Close()
		return nil, err
	}
	return &stream{port: port, rtp: rtp, rtcp: rtcp}, nil
}
