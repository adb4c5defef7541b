package sip

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// lostAnswer is what livekit-sip v1.8.0 answers when it reads its REFER transaction's
// end before the phone's answer (as lkhttp wraps it).
const lostAnswer = "rtc: transfer platform in ses_x to tel:+15550109999: twirp canceled: transaction failed to complete (0 intermediate responses)"

// transferLiveKit answers TransferSIPParticipant with err, and lists the call's leg in
// its room until leaveAfter transfers' worth of listings have passed (never when
// negative).
type transferLiveKit struct {
	LiveKit
	err        error
	mu         sync.Mutex
	listings   int
	leaveAfter int
}

func (l *transferLiveKit) TransferSIPParticipant(context.Context, rtc.SIPTransfer) error {
	return l.err
}

func (l *transferLiveKit) Participants(context.Context, string) ([]rtc.Participant, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listings++
	if l.leaveAfter >= 0 && l.listings > l.leaveAfter {
		return nil, nil
	}
	return []rtc.Participant{{Identity: platform.ParticipantIdentity, Kind: rtc.KindSIP}}, nil
}

func (l *transferLiveKit) listed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.listings
}

// TestTransferOutcomes: what the adapter makes of LiveKit's answers to a REFER. A clean
// answer is a transfer; an unknown participant an unknown call; the bridge losing the
// phone's answer a transfer that went through with the error reported, at once (the
// bridge never hangs that leg up, so waiting for it to leave would be in vain); any
// other error a transfer with the error reported when the leg leaves within
// TransferSettle, else a failed transfer.
func TestTransferOutcomes(t *testing.T) {
	refused := errors.New("rtc: transfer: twirp unavailable: call transfer failed: 486 Busy Here")
	for _, tc := range []struct {
		name       string
		err        error
		leaveAfter int
		want       func(error) bool
		wantList   bool // the adapter looks for the leg in the room
	}{
		{"202 and NOTIFY 200", nil, -1, func(err error) bool { return err == nil }, false},
		{"no such participant", fmt.Errorf("%w: gone", lkhttp.ErrNotFound), -1,
			func(err error) bool { return errors.Is(err, platform.ErrUnknownCall) }, false},
		{"answer lost", errors.New(lostAnswer), -1, reportedAs(lostAnswer), false},
		{"refused, the leg left", refused, 1, reportedAs(refused.Error()), true},
		{"refused, the leg stays", refused, -1, func(err error) bool {
			var r *platform.TransferReported
			return errors.Is(err, platform.ErrTransferFailed) && !errors.As(err, &r)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk := &transferLiveKit{err: tc.err, leaveAfter: tc.leaveAfter}
			a := &Adapter{LiveKit: lk}
			start := time.Now()
			err := a.Transfer(context.Background(), platform.Transfer{PlatformCallID: "SCL_x", CallID: "call_x", Room: "ses_x", To: "+15550109999"})
			if !tc.want(err) {
				t.Errorf("Transfer = %v (%T)", err, err)
			}
			if listed := lk.listed() > 0; listed != tc.wantList {
				t.Errorf("the adapter listed the room: %v, want %v", listed, tc.wantList)
			}
			if tc.leaveAfter < 0 && tc.wantList {
				if took := time.Since(start); took < TransferSettle {
					t.Errorf("a failure answered after %v, want TransferSettle (%v) waited for the leg", took, TransferSettle)
				}
			}
		})
	}
}

func reportedAs(msg string) func(error) bool {
	return func(err error) bool {
		var r *platform.TransferReported
		return errors.As(err, &r) && r.Err.Error() == msg && !errors.Is(err, platform.ErrTransferFailed)
	}
}

// TestAnswerLost: only livekit-sip's transaction end with no answer read, long before
// the REFER could time out, is a lost answer; the same end at Timer B is a phone that
// never answered.
func TestAnswerLost(t *testing.T) {
	lost := errors.New(lostAnswer)
	for _, tc := range []struct {
		err  error
		took time.Duration
		want bool
	}{
		{lost, 40 * time.Millisecond, true},
		{lost, 2 * time.Second, true},
		{lost, referTimerB, false},
		{errors.New("transaction failed to complete (1 intermediate responses)"), time.Millisecond, false},
		{errors.New("call transfer failed: 603 Declined"), time.Millisecond, false},
	} {
		if got := answerLost(tc.err, tc.took); got != tc.want {
			t.Errorf("answerLost(%q, %v) = %v, want %v", tc.err, tc.took, got, tc.want)
		}
	}
}
