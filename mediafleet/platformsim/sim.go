// Package platformsim is Bridgeline's simulated calling platform, for the local stack and tests.
// Its parties are bots (mediafleet/callerbot) that join LiveKit rooms as the platform
// participant, publishing a tone (silence where an assistant listens) and, on video
// calls, a moving test pattern, and decoding whatever they receive so tests can check
// what a caller hears and sees. A party can be told to speak (Say, say.go), and lists
// what it said and heard with their times.
//
// The control plane drives it through platform.Platform (dial, answer, reject, hang up);
// people and tests drive it through a small HTTP API under /sim/ (place an inbound call on
// a line, make its party speak, hang a call up, list calls). It reports back to the control plane with signed
// notifications (simhook), posted in order per call.
//
// Handles the sim dials behave by name: "sim:busy", "sim:no_answer" and "sim:failed" give
// those outcomes; any other handle answers after the ring delay.
package platformsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
)

// Name is the platform name lines use (sim.Name).
const Name = sim.Name

// Handles with a scripted outcome when dialled.
const (
	HandleBusy     = sim.HandleBusy
	HandleNoAnswer = sim.HandleNoAnswer
	HandleFailed   = sim.HandleFailed
)

// Call statuses.
const (
	StatusRinging  = "ringing"
	StatusAnswered = "answered"
	StatusRejected = "rejected"
	StatusBusy     = "busy"
	StatusNoAnswer = "no_answer"
	StatusFailed   = "failed"
	StatusEnded    = "ended"
)

// Who ended a call.
const (
	EndedByRemote     = "remote"     // the sim party hung up (POST /sim/calls/{id}/hangup)
	EndedByBridgeline = "bridgeline" // the control plane hung up or deleted the room
)

// Config configures the sim.
type Config struct {
	// NotifyURL receives the sim's notifications (the control plane's simhook.Path).
	NotifyURL string
	// Secret signs notifications; the control plane verifies with the same secret.
	Secret string
	// RingDelay is how long a dialled handle rings before it answers (default 200 ms).
	RingDelay time.Duration
	// HTTPClient posts notifications (default: 40 s timeout, above the longest
	// customer_decides wait the control plane may spend answering an inbound call).
	HTTPClient *http.Client
	Log        *slog.Logger
	// KeepEnded is how long an ended call stays readable (GET /sim/calls/{id}) after it
	// ends (default 10 minutes); MaxEnded bounds how many ended calls are kept (default
	// 1000, the oldest go first). Without them every call ever placed stays in memory:
	// about 3 KB each, measured at 46,000 sessions in 3 minutes under load.
	KeepEnded time.Duration
	MaxEnded  int
	// APIToken is the credential the sim's own API and page require where the sim runs
	// as a platform gateway (GatewayHandler; the gateway's SIM_API_TOKEN): anyone who
	// reaches that API can place calls on the lines. Without it the gateway serves no
	// /sim/ at all. The local stack's Handler, on loopback, takes none.
	APIToken string
	// ClientSDK is the livekit-client browser bundle the caller page loads (main reads
	// it from ClientSDKEnv). Empty: the one scripts/install-browser.sh installs, under
	// .cache/node in the working directory or a folder above it.
	ClientSDK string
}

// Call is one sim call.
type Call struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"`
	Direction  string      `json:"direction"` // inbound (placed on a line) | outbound (dialled by Bridgeline)
	From       string      `json:"from"`
	To         string      `json:"to"`
	Media      string      `json:"media"`
	Status     string      `json:"status"`
	CallID     string      `json:"call_id,omitempty"` // Bridgeline's call id
	Party      string      `json:"party,omitempty"`   // "browser" when a page is the party (browser.go)
	Room       *PageRoom   `json:"room,omitempty"`    // where a browser party joins, once answered
	Reason     string      `json:"reason,omitempty"`
	EndedBy    string      `json:"ended_by,omitempty"`
	InRoom     bool        `json:"in_room"`
	Heard      bool        `json:"heard_audio"`  // the party heard sound from the room
	Frames     int64       `json:"video_frames"` // video frames the party decoded
	Said       []Utterance `json:"said"`         // what the party was told to say (say.go)
	Sounds     []Sound     `json:"heard"`        // stretches of sound the party heard
	CreatedAt  time.Time   `json:"created_at"`
	AnsweredAt *time.Time  `json:"answered_at"`
	EndedAt    *time.Time  `json:"ended_at"`
}

// Final reports whether the call is over.
func (c Call) Final() bool {
	switch c.Status {
	case StatusRinging, StatusAnswered:
		return false
	}
	return true
}

// PartyOptions shape what a party publishes and watches; tests set them per call.
type PartyOptions struct {
	// Audio is what the party says; nil means a 440 Hz tone.
	Audio *callerbot.Source
	// OnFrame sees every video frame the party decodes.
	OnFrame func(callerbot.Frame)
	// Browser makes a page the party instead of a bot: the sim hands it the room and the
	// page joins (browser.go).
	Browser bool
}

type call struct {
	Call
	opts   PartyOptions
	bot    *callerbot.Bot
	frames atomic.Int64
	notes  chan platform.Notification
	cancel context.CancelFunc // stops a pending dial or join
	// settled is closed when the call's dial or join goroutine is over: its party is in
	// the room, or its join ended (failed, or hung up and left). Hangup waits for it.
	settled chan struct{}
	// bridging is set once Bridgeline answered an inbound call, while its party joins.
	bridging bool
	// room and joined are a browser party's: where it joins, and closed when it has.
	room   *platform.Room
	joined chan struct{}
	// said and heard are what the bot said and heard, kept when it leaves.
	said  []callerbot.Utterance
	heard []callerbot.Sound
}

// Sim is the simulated platform. It implements platform.Platform.
type Sim struct {
	sim.Kind // the sim's name, handles and abilities, as the control plane knows them

	cfg Config
	log *slog.Logger

	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	calls map[string]*call
	// dialled are the outbound calls by Bridgeline's call id: Dial is idempotent on it,
	// and Hangup takes it in place of the sim's id. Pruned with calls.
	dialled map[string]*call
	closed  bool
	// ended lists ended calls in the order they ended, for pruning (pruneLocked).
	ended []endedCall
}

// endedCall is one entry of Sim.ended.
type endedCall struct {
	id string
	at time.Time
}

var _ platform.Platform = (*Sim)(nil)

// New makes a sim; Close ends its calls.
func New(cfg Config) (*Sim, error) {
	if cfg.NotifyURL == "" || cfg.Secret == "" {
		return nil, errors.New("sim: NotifyURL and Secret are required")
	}
	if cfg.RingDelay == 0 {
		cfg.RingDelay = 200 * time.Millisecond
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 40 * time.Second}
	}
	if cfg.KeepEnded == 0 {
		cfg.KeepEnded = 10 * time.Minute
	}
	if cfg.MaxEnded == 0 {
		cfg.MaxEnded = 1000
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Sim{cfg: cfg, log: log.With("component", "sim"), ctx: ctx, stop: stop, calls: map[string]*call{},
		dialled: map[string]*call{}}, nil
}

// PlaceRequest places an inbound call on a line's handle.
type PlaceRequest struct {
	From  string
	To    string
	Media string
	Party PartyOptions
}

// Place starts an inbound call to req.To and tells the control plane. The caller joins
// the room once the control plane answers.
func (s *Sim) Place(req PlaceRequest) (Call, error) {
	if req.Media == "" {
		req.Media = platform.MediaVideo
	}
	if req.Media != platform.MediaVideo && req.Media != platform.MediaAudio {
		return Call{}, fmt.Errorf("sim: media must be video or audio, not %q", req.Media)
	}
	if req.To == "" || req.From == "" {
		return Call{}, errors.New("sim: from and to are required")
	}
	c, err := s.newCall("inbound", req.From, req.To, req.Media, "", req.Party)
	if err != nil {
		return Call{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Party.Browser {
		c.Party = PartyBrowser
	}
	s.notifyLocked(c, platform.EventInbound, "")
	return c.snapshot(), nil
}

// Dial implements platform.Platform: the handle rings for RingDelay, then answers (its
// party joins the room) or gives its scripted outcome. A second Dial with the same call
// id returns the first's sim id and places nothing.
func (s *Sim) Dial(ctx context.Context, req platform.DialRequest) (string, error) {
	if req.Room.URL == "" || req.Room.Token == "" || req.CallID == "" {
		return "", errors.New("sim: dial needs a room and a call id")
	}
	s.mu.Lock()
	prev := s.dialled[req.CallID]
	s.mu.Unlock()
	if prev != nil {
		return prev.ID, nil
	}
	c, err := s.newCall("outbound", req.From, req.To, req.Media, req.CallID, PartyOptions{})
	if errors.Is(err, errDialled) {
		return c.ID, nil // a concurrent Dial of the same call id won
	}
	if err != nil {
		return "", err
	}
	dctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	// Under the lock Close takes to set closed: no goroutine starts once Close waits.
	if s.closed {
		s.mu.Unlock()
		cancel()
		return "", errors.New("sim: closed")
	}
	c.cancel = cancel
	settled := make(chan struct{})
	c.settled = settled
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer close(settled)
		defer cancel()
		select {
		case <-dctx.Done():
			return
		case <-time.After(s.cfg.RingDelay):
		}
		switch req.To {
		case HandleBusy:
			s.finish(c.ID, StatusBusy, "", platform.EventBusy, "")
		case HandleNoAnswer:
			s.finish(c.ID, StatusNoAnswer, "", platform.EventNoAnswer, "")
		case HandleFailed:
			s.finish(c.ID, StatusFailed, "", platform.EventFailed, "scripted failure")
		default:
			s.join(dctx, c, req.Room)
		}
	}()
	return c.ID, nil
}

// Answer implements platform.Platform: the ringing inbound call's party joins the room.
func (s *Sim) Answer(ctx context.Context, platformCallID, callID string, room platform.Room) error {
	s.mu.Lock()
	c := s.calls[platformCallID]
	if c == nil || c.Direction != "inbound" || c.Status != StatusRinging || c.bridging {
		s.mu.Unlock()
		return platform.ErrUnknownCall
	}
	if s.closed {
		s.mu.Unlock()
		return errors.New("sim: closed")
	}
	c.CallID, c.bridging = callID, true
	dctx, cancel := context.WithCancel(s.ctx)
	c.cancel = cancel
	settled := make(chan struct{})
	c.settled = settled
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer close(settled)
		defer cancel()
		s.join(dctx, c, room)
	}()
	return nil
}

// Reject implements platform.Platform.
func (s *Sim) Reject(ctx context.Context, platformCallID, reason string) error {
	return s.RejectCall(ctx, platformCallID, "", reason)
}

// RejectCall implements platform.CallRejecter: the rejected call shows Bridgeline's call
// id (callID; none when the control plane recorded no call, such as a call to an
// unknown handle).
func (s *Sim) RejectCall(ctx context.Context, platformCallID, callID, reason string) error {
	s.mu.Lock()
	c := s.calls[platformCallID]
	if c == nil || c.Direction != "inbound" || c.Status != StatusRinging || c.bridging {
		s.mu.Unlock()
		return platform.ErrUnknownCall
	}
	if callID != "" {
		c.CallID = callID
	}
	s.mu.Unlock()
	s.finish(platformCallID, StatusRejected, EndedByBridgeline, "", reason)
	return nil
}

// Hangup implements platform.Platform: the party leaves the room. No notification is
// sent: Bridgeline asked for it.
//
// It returns once the party is out of the room, up to ctx: a party still joining (the
// LiveKit SDK's connect cannot be called off) finishes its join and leaves first.
// Bridgeline hangs up before it deletes the room, so that no join is under way when the
// room goes: livekit-server v1.11.0 keeps a room deleted during a participant's join
// alive outside its room table, for good (docs/deploy.md, "Memory").
func (s *Sim) Hangup(ctx context.Context, platformCallID string) error {
	s.finish(platformCallID, StatusEnded, EndedByBridgeline, "", "")
	s.mu.Lock()
	c := s.calls[platformCallID]
	if c == nil {
		c = s.dialled[platformCallID]
	}
	var settled chan struct{}
	if c != nil {
		settled = c.settled
	}
	s.mu.Unlock()
	if settled == nil {
		return nil
	}
	select {
	case <-settled:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sim: hang up %s: the party's join did not end: %w", platformCallID, ctx.Err())
	}
}

// RemoteHangup is the sim party hanging up: it leaves the room and the control plane is
// told.
func (s *Sim) RemoteHangup(platformCallID string) (Call, error) {
	s.mu.Lock()
	c := s.calls[platformCallID]
	s.mu.Unlock()
	if c == nil {
		return Call{}, platform.ErrUnknownCall
	}
	s.finish(platformCallID, StatusEnded, EndedByRemote, platform.EventHangup, "")
	return s.Get(platformCallID)
}

// Get returns a call.
func (s *Sim) Get(id string) (Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[id]
	if c == nil {
		return Call{}, platform.ErrUnknownCall
	}
	return c.snapshot(), nil
}

// ByCallID finds the sim call bridged for Bridgeline's call id.
func (s *Sim) ByCallID(callID string) (Call, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		if c.CallID == callID {
			return c.snapshot(), true
		}
	}
	return Call{}, false
}

// Bot returns the party of a call while it is in the room, for tests that inspect what
// it heard.
func (s *Sim) Bot(id string) *callerbot.Bot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls[id]; c != nil {
		return c.bot
	}
	return nil
}

// List returns every call, newest first.
func (s *Sim) List() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, 0, len(s.calls))
	for _, c := range s.calls {
		out = append(out, c.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// Close hangs every call up and waits for the sim's goroutines, up to ctx.
func (s *Sim) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	ids := make([]string, 0, len(s.calls))
	for id := range s.calls {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.finish(id, StatusEnded, EndedByBridgeline, "", "sim stopped")
	}
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errDialled is newCall's answer for a call id already dialled; it returns that call.
var errDialled = errors.New("sim: call id already dialled")

func (s *Sim) newCall(direction, from, to, media, callID string, opts PartyOptions) (*call, error) {
	now := time.Now().UTC()
	c := &call{Call: Call{ID: ident.New("simcall"), Object: "sim_call", Direction: direction, From: from, To: to,
		Media: media, Status: StatusRinging, CallID: callID, CreatedAt: now}, opts: opts,
		notes: make(chan platform.Notification, 16)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("sim: closed")
	}
	s.pruneLocked(now)
	if direction == "outbound" && callID != "" {
		if prev := s.dialled[callID]; prev != nil {
			return prev, errDialled
		}
		s.dialled[callID] = c
	}
	s.calls[c.ID] = c
	s.wg.Add(1)
	go s.deliver(c, c.notes)
	return c, nil
}

// pruneLocked forgets ended calls past KeepEnded, and the oldest beyond MaxEnded.
func (s *Sim) pruneLocked(now time.Time) {
	n := 0
	for n < len(s.ended) && (len(s.ended)-n > s.cfg.MaxEnded || now.Sub(s.ended[n].at) > s.cfg.KeepEnded) {
		if c := s.calls[s.ended[n].id]; c != nil && s.dialled[c.CallID] == c {
			delete(s.dialled, c.CallID)
		}
		delete(s.calls, s.ended[n].id)
		n++
	}
	if n > 0 {
		// A fresh slice now and then, so the pruned front's backing array is freed.
		if n > len(s.ended)/2 {
			s.ended = append([]endedCall(nil), s.ended[n:]...)
		} else {
			s.ended = s.ended[n:]
		}
	}
}

// join puts the call's party in the room; a failure to join fails the call.
func (s *Sim) join(ctx context.Context, c *call, room platform.Room) {
	if c.opts.Browser {
		s.awaitBrowser(ctx, c, room)
		return
	}
	// The default tone stops once an assistant is in the room (say.go); audio a test
	// chose plays on.
	audio, quiet := c.opts.Audio, false
	if audio == nil {
		tone := callerbot.Tone(440)
		audio, quiet = &tone, true
	}
	onFrame := c.opts.OnFrame
	bot, err := callerbot.Join(ctx, callerbot.Options{URL: room.URL, Token: room.Token, Audio: audio,
		QuietForAgents: quiet, Video: c.Media == platform.MediaVideo,
		OnFrame: func(f callerbot.Frame) {
			c.frames.Add(1)
			if onFrame != nil {
				onFrame(f)
			}
		}})
	if err != nil {
		s.log.Warn("party could not join", "sim_call_id", c.ID, "err", err)
		s.finish(c.ID, StatusFailed, "", platform.EventFailed, "party could not join the room")
		return
	}
	s.mu.Lock()
	if c.Status != StatusRinging {
		// Hung up while joining.
		s.mu.Unlock()
		bot.Leave()
		return
	}
	now := time.Now().UTC()
	c.bot, c.InRoom, c.Status, c.AnsweredAt = bot, true, StatusAnswered, &now
	if c.Direction == "outbound" {
		s.notifyLocked(c, platform.EventAnswered, "")
	}
	s.mu.Unlock()
	// The room going away (deleted by Bridgeline, or closed) ends the call.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-bot.Disconnected():
			s.finish(c.ID, StatusEnded, EndedByBridgeline, "", "room closed")
		case <-s.ctx.Done():
		}
	}()
}

// finish moves a live call to a final status once, takes its party out of the room and,
// when event is set, tells the control plane.
func (s *Sim) finish(id, status, endedBy, event, reason string) {
	s.mu.Lock()
	c := s.calls[id]
	if c == nil {
		c = s.dialled[id] // a Hangup by Bridgeline's call id
	}
	if c == nil || c.Final() {
		s.mu.Unlock()
		return
	}
	now := time.Now().UTC()
	c.Status, c.EndedBy, c.EndedAt, c.InRoom = status, endedBy, &now, false
	if reason != "" {
		c.Reason = reason
	}
	bot := c.bot
	if bot != nil {
		c.Heard = c.Heard || !bot.FirstSound().IsZero()
		c.said, c.heard = bot.Said(), bot.Sounds()
		for i := range c.heard {
			c.heard[i].Ongoing = false // the party has left: nothing more is heard
		}
	}
	c.bot = nil
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil // it holds the dial's context
	}
	if event != "" {
		s.notifyLocked(c, event, reason)
	}
	// deliver drains what is queued and exits; the call keeps no queue.
	close(c.notes)
	c.notes = nil
	s.ended = append(s.ended, endedCall{id: c.ID, at: now})
	s.pruneLocked(now)
	s.mu.Unlock()
	if bot != nil {
		bot.Leave()
	}
}

// notifyLocked queues a notification on the call's ordered queue.
func (s *Sim) notifyLocked(c *call, event, reason string) {
	if c.notes == nil {
		return // ended: nothing more is said about it
	}
	n := platform.Notification{ID: ident.New("simevt"), Event: event, PlatformCallID: c.ID, CallID: c.CallID,
		From: c.From, To: c.To, Media: c.Media, Reason: reason, At: time.Now().UTC()}
	select {
	case c.notes <- n:
	default:
		s.log.Error("notification queue full", "sim_call_id", c.ID, "event", event)
	}
}

// deliver posts a call's notifications in order, retrying each a few times.
// It is handed the queue: finish sets c.notes to nil once it closes it.
func (s *Sim) deliver(c *call, notes <-chan platform.Notification) {
	defer s.wg.Done()
	for n := range notes {
		body, _ := json.Marshal(n)
		for attempt := 0; attempt < 5; attempt++ {
			if attempt > 0 {
				select {
				case <-time.After(time.Duration(attempt*attempt) * 100 * time.Millisecond):
				case <-s.ctx.Done():
					return
				}
			}
			retry, err := s.post(body)
			if err == nil {
				break
			}
			s.log.Warn("notify control plane", "sim_call_id", c.ID, "event", n.Event, "attempt", attempt+1, "err", err)
			if !retry {
				break
			}
		}
	}
}

// post sends one notification; retry says whether a failure is worth another attempt
// (network errors and 5xx; a 4xx will not change).
func (s *Sim) post(body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.cfg.NotifyURL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(simhook.Header, simhook.SignNotification(s.cfg.Secret, body, time.Now()))
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return true, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusConflict:
		// The control plane already has this notification (an earlier attempt's answer
		// was lost): delivered.
		return false, nil
	case resp.StatusCode >= 300:
		return resp.StatusCode >= 500, fmt.Errorf("status %d", resp.StatusCode)
	}
	return false, nil
}

func (c *call) snapshot() Call {
	out := c.Call
	out.Room = c.pageRoom()
	out.Frames = c.frames.Load()
	if c.bot != nil && !c.bot.FirstSound().IsZero() {
		out.Heard = true
	}
	c.conversation(&out)
	return out
}
