package sipvideo

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

func TestSourceBudgets(t *testing.T) {
	s := newSources(SourceLimits{InviteRate: 2, InviteBurst: 3, AuthFailures: 2, AuthFailureEvery: 10 * time.Second})
	now := time.Unix(1_800_000_000, 0)
	admitted := func(src string) bool {
		ok, _ := s.admit(src, now)
		return ok
	}
	for i := range 3 {
		if !admitted("203.0.113.7:5060") {
			t.Fatalf("INVITE %d of a burst of 3 refused", i+1)
		}
	}
	if admitted("203.0.113.7:5061") {
		t.Error("a fourth INVITE at once, from another port of the same address, admitted")
	}
	if !admitted("198.51.100.9:5060") {
		t.Error("another address refused for the first one's burst")
	}
	now = now.Add(500 * time.Millisecond) // one INVITE's worth at 2 a second
	if !admitted("203.0.113.7:5060") || admitted("203.0.113.7:5060") {
		t.Error("after 500 ms at 2 a second, want exactly one more INVITE")
	}

	now = now.Add(time.Minute)
	s.failed("198.51.100.9:5060", now)
	if !admitted("198.51.100.9:5060") {
		t.Error("refused after one failed answer of two allowed")
	}
	s.failed("198.51.100.9:5060", now)
	if admitted("198.51.100.9:5060") {
		t.Error("admitted after two failed answers of two allowed")
	}
	now = now.Add(10 * time.Second)
	if !admitted("198.51.100.9:5060") {
		t.Error("still refused once a failure's worth of time went by")
	}
}

func TestSourcesBounded(t *testing.T) {
	s := newSources(SourceLimits{})
	now := time.Unix(1_800_000_000, 0)
	for i := range maxSources + 10 {
		s.admit(fmt.Sprintf("10.%d.%d.%d:5060", i>>16&255, i>>8&255, i&255), now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(s.by); n > maxSources {
		t.Errorf("%d sources followed, want at most %d", n, maxSources)
	}
}

// fakeTrunks is LiveKit's SIP configuration: one trunk with digest credentials.
type fakeTrunks struct{}

func (fakeTrunks) ListSIPInboundTrunks(context.Context) ([]rtc.SIPInboundTrunk, error) {
	return []rtc.SIPInboundTrunk{{ID: "ST_1", Numbers: []string{"+15550100001"}, AuthUsername: "provider", AuthPassword: "the-right-password-0123456789"}}, nil
}
func (fakeTrunks) ListSIPDispatchRules(context.Context) ([]rtc.SIPDispatchRule, error) {
	return []rtc.SIPDispatchRule{{RoomPrefix: "call"}}, nil
}

// TestPasswordGuessingIsCutOff: a source that answers the bridge's digest challenge with
// a wrong password gets 403 AuthFailures times, and then no answer at all, even with
// the right password (TestSourceBudgets: other addresses keep their own budgets).
func TestPasswordGuessingIsCutOff(t *testing.T) {
	b, err := Start(Config{SIPAddr: "127.0.0.1:0", GatewayURL: "ws://127.0.0.1:9", APIKey: "k", APISecret: "s", LiveKit: fakeTrunks{},
		Limits: SourceLimits{AuthFailures: 3, AuthFailureEvery: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	guesser := newTestClient(t, "127.0.0.1")
	target := fmt.Sprintf("sip:+15550100001@127.0.0.1:%d", b.addr.Port)

	for i := range 3 {
		if code := inviteWith(t, guesser, target, "wrong-password-"+fmt.Sprint(i)); code != sip.StatusForbidden {
			t.Fatalf("wrong password %d: %d, want 403", i+1, code)
		}
	}
	if code := inviteWith(t, guesser, target, "wrong-password-3"); code != 0 {
		t.Errorf("a fourth guess: %d, want no answer", code)
	}
	if code := inviteWith(t, guesser, target, "the-right-password-0123456789"); code != 0 {
		t.Errorf("the right password after three guesses: %d, want no answer", code)
	}
}

func newTestClient(t *testing.T, ip string) *sipgo.Client {
	t.Helper()
	ua, err := sipgo.NewUA(sipgo.WithUserAgentHostname(ip))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ua.Close() })
	c, err := sipgo.NewClient(ua, sipgo.WithClientAddr(ip+":0"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// inviteWith sends an INVITE, answers the digest challenge with password, and returns
// the final status (0: no answer within a second).
func inviteWith(t *testing.T, c *sipgo.Client, target, password string) int {
	t.Helper()
	var uri sip.Uri
	if err := sip.ParseUri(target, &uri); err != nil {
		t.Fatal(err)
	}
	req := sip.NewRequest(sip.INVITE, uri)
	req.SetBody([]byte(testOffer))
	req.AppendHeader(sip.NewHeader("Content-Type", "application/sdp"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := c.Do(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != sip.StatusUnauthorized {
		return res.StatusCode
	}
	res, err = c.DoDigestAuth(ctx, req, res, sipgo.DigestAuth{Username: "provider", Password: password})
	if errors.Is(err, context.DeadlineExceeded) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}

const testOffer = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
	"m=audio 40000 RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
