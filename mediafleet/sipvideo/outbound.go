package sipvideo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	sipplatform "github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// defaultRinging is how long a dialled phone rings unanswered (livekit-sip's default).
const defaultRinging = 80 * time.Second

// offerPT is the payload type the bridge offers VP8 with.
const offerPT = 96

var _ sipplatform.VideoDialer = (*Bridge)(nil)

// DialVideo rings a phone through a trunk with an audio and video offer. The callee's
// participant joins the room at once (its sip.callStatus "dialing"); the call then goes
// on in the background: answered, the attribute turns active (the gateway tells the
// control plane) and media flows; refused or unanswered, the participant leaves with
// the reason the gateway maps (busy, no answer, failed).
func (b *Bridge) DialVideo(ctx context.Context, vc sipplatform.VideoCall) (string, error) {
	host, port, err := trunkHostPort(vc.Trunk.Address)
	if err != nil {
		return "", err
	}
	if vc.To == "" || vc.Room == "" || vc.Identity == "" {
		return "", errors.New("sipvideo: dial needs a number, a room and an identity")
	}
	c := &call{b: b, pcid: "SCV_" + randHex(6), from: vc.From, to: vc.To, ended: make(chan struct{})}
	if c.audio, err = b.ports.open(); err != nil {
		return "", err
	}
	if c.video, err = b.ports.open(); err != nil {
		c.audio.close()
		return "", err
	}
	// The offer: G.711 both laws and telephone-event, VP8.
	c.offer = offer{audioPT: ptPCMU, dtmfPT: 101, videoPT: offerPT, videoOffered: true}
	sdpOffer := offerSDP(b.cfg.MediaIP, c.audio.port, c.video.port)
	m := newMedia(c, b.log.With("platform_call_id", c.pcid))

	t := true
	claims := lktoken.Claims{Name: vc.Name, Kind: string(rtc.KindSIP), Metadata: vc.Metadata,
		Video: &lktoken.VideoGrant{RoomJoin: true, Room: vc.Room, CanPublish: &t, CanSubscribe: &t, CanPublishData: &t, CanUpdateOwnMetadata: &t},
		Attributes: map[string]string{rtc.AttrSIPCallID: c.pcid, rtc.AttrSIPPhoneNumber: vc.To, rtc.AttrSIPTrunkNumber: vc.From,
			rtc.AttrSIPCallStatus: "dialing", sipplatform.AttrMedia: "video"}}
	claims.Subject = vc.Identity
	token, err := lktoken.Sign(b.cfg.APIKey, b.cfg.APISecret, claims, time.Now(), 10*time.Minute)
	if err != nil {
		m.close()
		return "", err
	}
	room, err := lksdk.ConnectToRoomWithToken(b.cfg.GatewayURL, token, m.callback(), lksdk.WithAutoSubscribe(true))
	if err != nil {
		m.close()
		return "", fmt.Errorf("sipvideo: join %s: %w", vc.Room, err)
	}
	c.room = room
	if err := m.publish(); err != nil {
		room.DisconnectWithReason(livekit.DisconnectReason_SIP_TRUNK_FAILURE)
		m.close()
		return "", fmt.Errorf("sipvideo: publish: %w", err)
	}

	uri := sip.Uri{User: vc.To, Host: host, Port: port}
	req := sip.NewRequest(sip.INVITE, uri)
	fromParams := sip.NewParams()
	fromParams.Add("tag", randHex(8))
	req.AppendHeader(&sip.FromHeader{DisplayName: vc.From, Address: sip.Uri{User: vc.From, Host: b.cfg.MediaIP, Port: b.addr.Port},
		Params: fromParams})
	req.AppendHeader(&sip.ToHeader{Address: uri, Params: sip.NewParams()})
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	req.SetBody(sdpOffer)
	if tr := strings.ToUpper(string(vc.Trunk.Transport)); tr == "TCP" {
		req.SetTransport("TCP")
	}
	dua := sipgo.DialogUA{Client: b.client, ContactHDR: sip.ContactHeader{Address: sip.Uri{User: vc.From, Host: b.cfg.MediaIP, Port: b.addr.Port}}}
	sess, err := dua.WriteInvite(ctx, req)
	if err != nil {
		room.DisconnectWithReason(livekit.DisconnectReason_SIP_TRUNK_FAILURE)
		m.close()
		return "", fmt.Errorf("sipvideo: invite: %w", err)
	}
	c.cli = sess
	c.sipCallID = req.CallID().Value()
	b.mu.Lock()
	b.calls[c.sipCallID] = c
	b.mu.Unlock()
	ringing := vc.RingingTimeout
	if ringing <= 0 {
		ringing = defaultRinging
	}
	log := b.log.With("platform_call_id", c.pcid)
	log.Info("video call dialled", "to", redact.Number(vc.To), "room", vc.Room)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() {
			b.mu.Lock()
			delete(b.calls, c.sipCallID)
			b.mu.Unlock()
		}()
		defer m.close()
		c.ring(m, log, sess, vc, ringing)
	}()
	return c.pcid, nil
}

// ring waits for the callee's answer, then bridges the call.
func (c *call) ring(m *media, log *slog.Logger, sess *sipgo.DialogClientSession, vc sipplatform.VideoCall, ringing time.Duration) {
	ctx, cancel := context.WithTimeout(c.b.ctx, ringing)
	defer cancel()
	go func() {
		// Bridgeline hung up while it rang (the participant was removed): CANCEL.
		select {
		case <-c.ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := sess.WaitAnswer(ctx, sipgo.AnswerOptions{Username: vc.Trunk.AuthUsername, Password: vc.Trunk.AuthPassword})
	if err != nil {
		reason := livekit.DisconnectReason_SIP_TRUNK_FAILURE
		var de *sipgo.ErrDialogResponse
		switch {
		case errors.As(err, &de) && (de.Res.StatusCode == 486 || de.Res.StatusCode == 600 || de.Res.StatusCode == 603):
			reason = livekit.DisconnectReason_USER_REJECTED
		case errors.As(err, &de) && (de.Res.StatusCode == 408 || de.Res.StatusCode == 480 || de.Res.StatusCode == 487):
			reason = livekit.DisconnectReason_USER_UNAVAILABLE
		case ctx.Err() != nil && c.b.ctx.Err() == nil:
			reason = livekit.DisconnectReason_USER_UNAVAILABLE
		}
		log.Info("video call not answered", "err", err, "reason", reason)
		c.room.DisconnectWithReason(reason)
		sess.Close()
		return
	}
	if err := sess.Ack(ctx); err != nil {
		log.Warn("video call: ACK", "err", err)
	}
	log.Debug("video call: the phone's answer", "sdp", string(sess.InviteResponse.Body()))
	ans, err := parseOffer(sess.InviteResponse.Body())
	if err != nil {
		log.Warn("video call: unusable answer", "err", err)
		c.dlg = sess
		c.end("unusable answer")
		c.serve(m, log, "audio")
		return
	}
	c.offer.audioPT, c.offer.dtmfPT = ans.audioPT, ans.dtmfPT
	m.law = lawOf(ans.audioPT)
	c.audio.setRemote(ans.audioAddr, ans.audioRTCP, ans.audioRTCPMux)
	media := "audio"
	if ans.videoAddr != nil {
		c.offer.videoPT = ans.videoPT
		c.video.setRemote(ans.videoAddr, ans.videoRTCP, ans.videoRTCPMux)
		media = "video"
	} else {
		// The phone answered audio only: no video is sent to it or taken from it.
		c.video.close()
		c.video = nil
	}
	log.Info("video call answered", "media", media)
	c.dlg = sess
	c.serve(m, log, media)
}

// offerSDP is the bridge's offer to a phone it rings: G.711 (PCMU, PCMA) with
// telephone-event, and VP8.
func offerSDP(ip string, audioPort, videoPort int) []byte {
	id := time.Now().UnixNano()
	return []byte(fmt.Sprintf("v=0\r\no=bridgeline %d %d IN IP4 %s\r\ns=bridgeline\r\nc=IN IP4 %s\r\nt=0 0\r\n"+
		"m=audio %d RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=sendrecv\r\n"+
		"m=video %d RTP/AVP %d\r\na=rtpmap:%d VP8/90000\r\na=rtcp-fb:%d nack pli\r\na=rtcp-fb:%d ccm fir\r\na=sendrecv\r\n",
		id, id, ip, ip, audioPort, videoPort, offerPT, offerPT, offerPT, offerPT))
}

// trunkHostPort splits a trunk's address (host[:port], no sip: prefix).
func trunkHostPort(addr string) (string, int, error) {
	addr = strings.TrimPrefix(addr, "sip:")
	if addr == "" {
		return "", 0, errors.New("sipvideo: the trunk has no address")
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 5060, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("sipvideo: trunk address %q: bad port", addr)
	}
	return host, port, nil
}
