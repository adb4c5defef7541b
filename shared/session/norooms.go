package session

import (
	"context"
	"errors"

	"github.com/bridgeline/bridgeline/shared/rtc"
)

// NoRooms is the Rooms of a process given no LiveKit client (a Lambda that never talks to
// LiveKit): it only knows rtc_url (what session and call reads show), and anything else
// is a configuration error.
type NoRooms struct{ Public string }

// ErrNoLiveKit is what NoRooms answers to anything but PublicURL.
var ErrNoLiveKit = errors.New("this process has no LiveKit client (LIVEKIT_CREDENTIALS_ARN)")

func (n NoRooms) PublicURL() string { return n.Public }

func (NoRooms) CreateRoom(context.Context, rtc.RoomSpec) (rtc.Room, error) {
	return rtc.Room{}, ErrNoLiveKit
}
func (NoRooms) DeleteRoom(context.Context, string) error                  { return ErrNoLiveKit }
func (NoRooms) Dispatch(context.Context, string, rtc.AgentDispatch) error { return ErrNoLiveKit }
func (NoRooms) ParticipantToken(rtc.Grant) (rtc.Token, error)             { return rtc.Token{}, ErrNoLiveKit }
func (NoRooms) Participants(context.Context, string) ([]rtc.Participant, error) {
	return nil, ErrNoLiveKit
}
func (NoRooms) SubscribeOnly(context.Context, string, string) error    { return ErrNoLiveKit }
func (NoRooms) SendData(context.Context, string, string, []byte) error { return ErrNoLiveKit }
