package platformsim

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// PartyBrowser is Call.Party when a browser page is the caller: a person (or a browser
// test) places the call from the sim's page at GET /sim/ and joins the room as the
// platform participant, instead of a bot.
//
// The page places the call with POST /sim/calls {"party": "browser", ...}, polls
// GET /sim/calls/{id} until the call carries a room (Bridgeline answered it), joins the
// room with that URL and token, tells the sim with POST /sim/calls/{id}/joined, and hangs
// up with POST /sim/calls/{id}/hangup.
const PartyBrowser = "browser"

// browserJoinTimeout bounds the time from answer to the page joining; a page that never
// joins (closed, or no media) fails the call as a bot that cannot join does.
const browserJoinTimeout = 30 * time.Second

// PageRoom is where a browser party joins: the LiveKit URL and the platform participant's
// token, shown only on browser calls and only while the call is live.
type PageRoom struct {
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	Identity         string `json:"identity"`
}

// awaitBrowser hands the room to the call's page and waits for it to join.
func (s *Sim) awaitBrowser(ctx context.Context, c *call, room platform.Room) {
	s.mu.Lock()
	if c.Final() {
		s.mu.Unlock()
		return
	}
	c.room, c.joined = &room, make(chan struct{})
	joined := c.joined
	s.mu.Unlock()
	t := time.NewTimer(browserJoinTimeout)
	defer t.Stop()
	select {
	case <-joined:
	case <-ctx.Done():
	case <-t.C:
		s.log.Warn("browser party did not join", "sim_call_id", c.ID)
		s.finish(c.ID, StatusFailed, "", platform.EventFailed, "the browser party did not join the room")
	}
}

// Joined records that a call's browser page is in the room: the call is answered. Saying
// it again changes nothing.
func (s *Sim) Joined(id string) (Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[id]
	if c == nil || c.Party != PartyBrowser || c.Final() || c.joined == nil {
		return Call{}, platform.ErrUnknownCall
	}
	if c.Status == StatusRinging {
		now := time.Now().UTC()
		c.Status, c.InRoom, c.AnsweredAt = StatusAnswered, true, &now
		close(c.joined)
	}
	return c.snapshot(), nil
}

// pageRoom is the room a browser party may join: set once answered, gone once over.
func (c *call) pageRoom() *PageRoom {
	if c.Party != PartyBrowser || c.room == nil || c.Final() {
		return nil
	}
	return &PageRoom{RTCURL: c.room.URL, ParticipantToken: c.room.Token, Identity: platform.ParticipantIdentity}
}
