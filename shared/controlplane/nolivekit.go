package controlplane

import (
	"context"
	"errors"

	"github.com/bridgeline/bridgeline/shared/rtc"
)

// NoLiveKit is the Rooms of a process given no LiveKit client: it only knows rtc_url
// (what session and call reads show), and anything else is a configuration error.
type NoLiveKit struct{ Public string }

// ErrNoLiveKit is what NoLiveKit answers to anything but PublicURL.
var ErrNoLiveKit = errors.New("this process has no LiveKit client (LIVEKIT_CREDENTIALS_ARN)")

func (n NoLiveKit) PublicURL() string { return n.Public }

func (NoLiveKit) CreateRoom(context.Context, rtc.RoomSpec) (rtc.Room, error) {
	return rtc.Room{}, ErrNoLiveKit
}
func (NoLiveKit) DeleteRoom(context.Context, string) error                  { return ErrNoLiveKit }
func (NoLiveKit) Dispatch(context.Context, string, rtc.AgentDispatch) error { return ErrNoLiveKit }
func (NoLiveKit) ParticipantToken(rtc.Grant) (rtc.Token, error)             { return rtc.Token{}, ErrNoLiveKit }
func (NoLiveKit) Participants(context.Context, string) ([]rtc.Participant, error) {
	return nil, ErrNoLiveKit
}
func (NoLiveKit) SubscribeOnly(context.Context, string, string) error { return ErrNoLiveKit }
