package session_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// trunkPhone is a trunk-based telephone platform that notes the calls it is told to
// refuse.
type trunkPhone struct {
	mu      sync.Mutex
	refused map[string]string // platform call id -> reason
}

func (*trunkPhone) Name() string                         { return "trunked" }
func (*trunkPhone) CheckHandle(h string) error           { return platform.CheckE164(h) }
func (*trunkPhone) CanTransfer() bool                    { return false }
func (*trunkPhone) TestKeys() bool                       { return false }
func (*trunkPhone) Hangup(context.Context, string) error { return nil }
func (*trunkPhone) Answer(context.Context, string, string, platform.Room) error {
	return nil
}
func (*trunkPhone) Dial(context.Context, platform.DialRequest) (string, error) {
	return "", errors.New("not dialling")
}
func (p *trunkPhone) Reject(_ context.Context, pcid, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused[pcid] = reason
	return nil
}

// TestInboundCallOnlyOnItsLinesTrunk: a trunk line takes an inbound call only when the
// call authenticated as the line's own trunk (Notification.Trunk): a call another trunk
// let in for the same number (another account's, whose LiveKit trunk still lists the
// number) is refused as no such line and leaves no call on the line's account.
func TestInboundCallOnlyOnItsLinesTrunk(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "inbound-trunk.db")
	phone := &trunkPhone{refused: map[string]string{}}
	reg, err := platform.NewRegistry(phone)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	svc, err := session.New(st, &deletingRooms{}, session.WithPlatforms(reg),
		session.WithClock(func() time.Time { return now }), session.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	owner, squat := ident.New("trunk"), ident.New("trunk")
	l := line.Line{ID: ident.New("line"), AccountID: "acct_owner", Handle: "+18005550199", Platform: phone.Name(),
		InboundMode: line.ModeDisabled, DecisionTimeoutSeconds: 10, OnDecisionTimeout: line.TimeoutDecline,
		Revision: 1, CreatedAt: now, UpdatedAt: now, SIPTrunkID: owner}
	if err := st.CreateLine(ctx, l); err != nil {
		t.Fatal(err)
	}
	notify := func(trunk string) string {
		pcid := "SCL_" + ident.New("x")
		err := svc.HandleNotification(ctx, phone.Name(), platform.Notification{ID: ident.New("evt"), Event: platform.EventInbound,
			PlatformCallID: pcid, From: "+15550107777", To: l.Handle, Media: platform.MediaAudio, At: now, Trunk: trunk})
		if err != nil {
			t.Fatal(err)
		}
		return pcid
	}
	for name, trunk := range map[string]string{"another trunk": squat, "no trunk": ""} {
		pcid := notify(trunk)
		if phone.refused[pcid] != "no such line" {
			t.Errorf("%s: refused %q, want no such line", name, phone.refused[pcid])
		}
		if _, err := st.CallByPlatformID(ctx, phone.Name(), pcid); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("%s: the line's account has a call record (%v), want none", name, err)
		}
	}
	// On its own trunk the call is the line's (declined here: the line is disabled).
	pcid := notify(owner)
	c, err := st.CallByPlatformID(ctx, phone.Name(), pcid)
	if err != nil || c.LineID != l.ID || c.AccountID != "acct_owner" || c.Status != call.StatusDeclined {
		t.Errorf("the call on the line's trunk = %+v, %v; want the line's, declined", c, err)
	}
}
