// Package pipeline runs one assistant-handled call inside a persona worker: the room
// side of it. It joins the room LiveKit dispatched the job for, shows the branded
// connecting screen at once, verifies media both ways (decodable audio from the caller;
// the caller subscribed to every track we publish), then switches to the avatar and
// plays the greeting, hands the call to a Conversation as a speech.Line, and reports
// each step and the end to the control plane.
//
// A call runs as stages, each a method that returns how the call ended, or nil to go
// on: prepare (greeting synthesis, tracks), join, verify, greet, converse; finish leaves
// the room and sends the ended report. Room callbacks reach them as the call's ended
// channel and the verification channels.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/recording"
	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// End reasons a worker reports; the contract defines them.
const (
	EndCallerHangup    = persona.EndCallerHangup
	EndAssistantHangup = persona.EndAssistantHangup
	EndMediaFailed     = persona.EndMediaFailed
	EndRoomClosed      = persona.EndRoomClosed
	EndTerminated      = persona.EndTerminated
	EndWorkerShutdown  = persona.EndWorkerShutdown
	EndError           = persona.EndError
)

// Reporter delivers reports to the control plane (report.Client does).
type Reporter interface {
	Send(ctx context.Context, r persona.Report) error
}

// Transferer asks the control plane to transfer a call (report.Client does): a Reporter
// that is one lets the assistant's transfer_call tool work. Pending: the control plane
// queued the transfer, whose failure comes in the room (persona.TransferNotice).
type Transferer interface {
	Transfer(ctx context.Context, req persona.TransferRequest) (pending bool, err error)
}

// AvatarSheets hands out the character sheets of the accounts' own avatars and the
// accounts' logos (report.Client does): a Reporter that is one lets a call show its
// account's avatar and its logo on the connecting screen; else, or when the sheet cannot
// be read, the call shows the default built-in, and no logo.
type AvatarSheets interface {
	AvatarSheet(ctx context.Context, req persona.AvatarRequest) (persona.AvatarSheet, error)
}

// ToolCaller asks the control plane to run a tool call of a call (report.Client does):
// the worker holds neither the customer's URL nor the secret that signs the request.
type ToolCaller interface {
	CallTool(ctx context.Context, req persona.ToolRequest) (persona.ToolResponse, error)
}

// Config is what every call of a worker shares.
type Config struct {
	Width, Height int // video frame size; default 640x360
	FPS           int // default 15
	// IdleFPS is the avatar's rate while nothing on it changes; default 5, FPS or more
	// draws every frame.
	IdleFPS   int
	VideoKbps int // default 500
	// VerifyTimeout bounds the time from joining the room to verified media; past it the
	// call ends with media_failed. Default 10 s.
	VerifyTimeout time.Duration
	// ConnectingDwell is how long the connecting screen keeps showing after a keyframe of
	// it went out to a subscribed caller, so that the caller's decoder shows it before the
	// avatar replaces it. Default 300 ms.
	ConnectingDwell time.Duration
	Voices          tts.Voices
	// Conversation runs after the greeting; default Listen (hold the line until the call
	// ends).
	Conversation Conversation
	Reporter     Reporter
	// Tools runs the calls' tool calls; nil: a tool call fails as unavailable.
	Tools ToolCaller
	// AMDRecognizer, when set, transcribes the callee's first words for the
	// answering-machine detection ("leave a message", "say your name"); nil: it decides
	// from the audio alone.
	AMDRecognizer speech.Recognizer
	// AMDNewVAD, when set, makes the voice activity detector that tells the callee's
	// speech for the answering-machine detection; nil: the audio's level does.
	AMDNewVAD func() (speech.VAD, error)
	// Recordings stores the files of recorded calls (persona.Job.Recording); nil: a
	// recorded call's ended report says it has none.
	Recordings RecordingStore
	Log        *slog.Logger
	// OnJoined, when set, is told when a call's worker has joined its room (benchmarks).
	OnJoined func(job persona.Job, at time.Time)
}

// Runner runs calls.
type Runner struct {
	cfg    Config
	sheets avatar.SheetCache
	logos  avatar.LogoCache
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Runner, error) {
	if cfg.Width == 0 && cfg.Height == 0 {
		cfg.Width, cfg.Height = 640, 360
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("pipeline: video size %dx%d must be positive and even", cfg.Width, cfg.Height)
	}
	if cfg.FPS <= 0 {
		cfg.FPS = 15
	}
	if cfg.IdleFPS <= 0 {
		cfg.IdleFPS = min(5, cfg.FPS)
	}
	if cfg.VideoKbps <= 0 {
		cfg.VideoKbps = 500
	}
	if cfg.VerifyTimeout <= 0 {
		cfg.VerifyTimeout = 10 * time.Second
	}
	if cfg.ConnectingDwell <= 0 {
		cfg.ConnectingDwell = 300 * time.Millisecond
	}
	if cfg.Voices == nil {
		return nil, errors.New("pipeline: Voices is required")
	}
	if cfg.Reporter == nil {
		return nil, errors.New("pipeline: Reporter is required")
	}
	if cfg.Conversation == nil {
		cfg.Conversation = Listen{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Runner{cfg: cfg}, nil
}

// Run runs one call until it ends and returns the ended report it sent. The error is
// non-nil only when the worker failed the call (end reason "error").
func (r *Runner) Run(ctx context.Context, lk agent.Job, job persona.Job) (persona.Report, error) {
	c := newCall(r, lk, job)
	e := c.run(ctx)
	return c.finish(e.reason), e.err
}

// ending is how a call ended: the reason reported, and the error when the worker failed
// the call.
type ending struct {
	reason string
	err    error
}

// failed is the ending of a call the worker failed.
func failed(err error) *ending { return &ending{reason: EndError, err: err} }

// call is one running call.
type call struct {
	r        *Runner
	lk       agent.Job
	job      persona.Job
	log      *slog.Logger
	answered time.Time
	video    bool

	endOnce sync.Once
	ended   chan string

	reports     chan persona.Report
	reportsDone chan struct{}

	speaker  *speaker
	painter  *painter
	listener *listener
	// viewer keeps stills of the caller's video for the model (vision.go); nil when the
	// version's vision is off.
	viewer *viewer
	keys   chan speech.Key // the caller's keypad: SIP DTMF packets from the caller
	// transferFailures are the control plane's notices of the call's failed transfers
	// (persona.TransferTopic packets).
	transferFailures chan speech.TransferFailure
	room             *lksdk.Room
	captions         *captions
	// recording is the call's file while it is recorded (record.go).
	recording callRecording
	loops     sync.WaitGroup
	stop      context.CancelFunc

	// callerIn is closed once the caller is in the room: at once, except on a web call,
	// whose caller joins after the worker (awaitCaller).
	callerIn   chan struct{}
	callerOnce sync.Once

	mu         sync.Mutex
	audioSID   string               // our audio track's sid, which the assistant's captions name
	turns      int                  // final turns reported (ReportTurn)
	metrics    persona.Metrics      // the call's own: connecting screen and greeting
	record     *conversation.Record // the transcript and the conversation's metrics
	ours       map[string]bool      // sids of the tracks we published
	subscribed map[string]bool      // sids the server said someone subscribed to
	requested  map[string]bool      // caller track sids we asked to subscribe to
	subsOK     chan struct{}
	subsOnce   sync.Once
	finished   bool // no media loop starts after finish began
	// amd is the answering-machine detection's decision (amd.go); silentAnswer, that it
	// was silence, which shortens the conversation's idle timeout.
	amd          *persona.AMDResult
	silentAnswer bool
	// reportsClosed: the ended report is queued, the last one.
	reportsClosed bool
}

func newCall(r *Runner, lk agent.Job, job persona.Job) *call {
	answered := job.AnsweredAt
	if answered.IsZero() {
		answered = lk.Offered
	}
	c := &call{
		r: r, lk: lk, job: job, answered: answered,
		log:   r.cfg.Log.With("call_id", job.CallID, "room", lk.Room, "job_id", lk.ID),
		video: job.Media != "audio",
		ended: make(chan string, 1),
		// Room for every turn report of a long call while the control plane is slow.
		reports:          make(chan persona.Report, 256),
		reportsDone:      make(chan struct{}),
		keys:             make(chan speech.Key, 32),
		transferFailures: make(chan speech.TransferFailure, 4),
		record:           conversation.NewRecord(answered),
		ours:             map[string]bool{},
		subscribed:       map[string]bool{},
		requested:        map[string]bool{},
		subsOK:           make(chan struct{}),
		callerIn:         make(chan struct{}),
	}
	c.listener = newListener(func(pcm []int16, at time.Time) { c.recordSide(recording.Caller, pcm, speech.Rate, at) })
	if c.video { // an audio call's caller shows nothing to see
		c.viewer = newViewer(job.Version.Vision, c.log)
	}
	if !job.WebCall() {
		c.callerOnce.Do(func() { close(c.callerIn) })
	}
	go c.sendReports(context.WithoutCancel(context.Background()))
	return c
}

// callerArrived notes that the caller is in the room, once. A web call is answered then:
// its record counts from this moment.
func (c *call) callerArrived(at time.Time) {
	c.callerOnce.Do(func() {
		c.mu.Lock()
		c.answered, c.record = at, conversation.NewRecord(at)
		c.mu.Unlock()
		close(c.callerIn)
	})
}

// afterCaller runs a media loop once the caller is in the room: a web call's worker,
// in the room before its caller, sends nothing until then. A call that ends first never
// runs the loop, and release frees what the loop would have (its encoder).
func (c *call) afterCaller(ctx context.Context, loop func(context.Context), release func()) {
	c.start(ctx, func(ctx context.Context) {
		select {
		case <-c.callerIn:
			loop(ctx)
		case <-ctx.Done():
			release()
		}
	})
}

// transferNotice takes a persona.TransferNotice of this call's failed transfer.
func (c *call) transferNotice(payload []byte) {
	var n persona.TransferNotice
	if err := json.Unmarshal(payload, &n); err != nil || n.CallID != c.job.CallID || n.Status != persona.TransferFailed {
		c.log.Warn("transfer notice ignored", "err", err, "notice_call_id", n.CallID, "status", n.Status)
		return
	}
	f := speech.TransferFailure{To: n.To, Failure: n.Failure, ByAssistant: n.By == "assistant"}
	select {
	case c.transferFailures <- f:
	default:
		c.log.Warn("transfer notices not read; dropping", "to", redact.Number(n.To))
	}
}

func (c *call) end(reason string) {
	c.endOnce.Do(func() { c.ended <- reason })
}

// sinceAnswer is an offset from answer in milliseconds.
func (c *call) sinceAnswer(t time.Time) int64 { return c.record.Offset(t) }

// metricsLocked are the call's metrics so far; c.mu held.
func (c *call) metricsLocked() persona.Metrics {
	m := c.metrics
	c.record.Metrics(&m)
	return m
}

func (c *call) report(kind string) {
	c.mu.Lock()
	rep := persona.Report{Kind: kind, CallID: c.job.CallID, SessionID: c.job.SessionID, At: time.Now().UTC(), Metrics: c.metricsLocked()}
	c.mu.Unlock()
	c.enqueue(rep)
}

// enqueue queues a report for sendReports without waiting; once the ended report is
// queued, nothing more is.
func (c *call) enqueue(rep persona.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reportsClosed {
		c.log.Warn("report after the call's end; dropping", "kind", rep.Kind)
		return
	}
	select {
	case c.reports <- rep:
	default:
		c.log.Warn("report queue full; dropping", "kind", rep.Kind)
	}
}

// sendReports delivers reports in order, so that ended always comes last.
func (c *call) sendReports(ctx context.Context) {
	defer close(c.reportsDone)
	for rep := range c.reports {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := c.r.cfg.Reporter.Send(sctx, rep); err != nil {
			c.log.Error("report not delivered", "kind", rep.Kind, "err", err)
		}
		cancel()
	}
}

// run takes the call through its stages.
func (c *call) run(parent context.Context) ending {
	greeting := c.synthesizeGreeting(parent)
	ctx, stop := context.WithCancel(parent)
	c.stop = stop
	defer stop()
	tracks, err := c.makeTracks(ctx)
	if err != nil {
		return *failed(err)
	}
	joined := time.Now()
	if err := c.join(tracks, joined); err != nil {
		return *failed(err)
	}
	if c.job.WebCall() {
		at, e := c.awaitCaller(ctx)
		if e != nil {
			return *e
		}
		// Media is verified within the bound from the caller's arrival.
		joined = at
	}
	if err := c.startRecording(); err != nil {
		return *failed(err)
	}
	if e := c.verify(ctx, joined); e != nil {
		return *e
	}
	c.report(persona.ReportMediaVerified)
	if c.job.AMD != nil && !c.job.WebCall() {
		if e := c.detect(ctx); e != nil {
			return *e
		}
	}
	if e := c.greet(ctx, greeting); e != nil {
		return *e
	}
	return c.converse(ctx)
}

// synthesis is the greeting's audio, made while the room is joined and media verified.
type synthesis struct {
	pcm tts.PCM // at the speaker's rate
	err error
}

// synthesizeGreeting starts synthesising the greeting, in the voice the conversation
// goes on with.
func (c *call) synthesizeGreeting(ctx context.Context) <-chan synthesis {
	out := make(chan synthesis, 1)
	go func() {
		v := c.job.Version
		if v.Greeting == "" {
			out <- synthesis{}
			return
		}
		pcm, err := c.r.cfg.Voices(persona.VoiceFor(v)).Synthesize(ctx, v.Greeting)
		if err != nil {
			out <- synthesis{err: err}
			return
		}
		resampled, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
		out <- synthesis{pcm: tts.PCM{Rate: outRate, Samples: resampled}, err: err}
	}()
	return out
}

// look is what the call's video shows: the renderer that draws its avatar (scene) and
// the account's logo for the connecting screen (nil: none). An own avatar's sheet and a
// logo not held yet are asked for in one request (persona.AvatarPath).
func (c *call) look(ctx context.Context) (avatar.Renderer, image.Image) {
	cfg := c.r.cfg
	id := c.job.Version.AvatarID
	builtin, isBuiltin := avatar.Lookup(id)
	own := !isBuiltin && avatars.IsCustomID(id)
	var sh avatar.Sheet
	haveSheet := false
	if own {
		sh, haveSheet = c.r.sheets.Get(id)
	}
	var logo image.Image
	haveLogo := c.job.Brand.Logo == ""
	if !haveLogo {
		logo, haveLogo = c.r.logos.Get(c.job.AccountID, c.job.Brand.Logo)
	}
	sheets, canAsk := cfg.Reporter.(AvatarSheets)
	if canAsk && ((own && !haveSheet) || !haveLogo) {
		req := persona.AvatarRequest{CallID: c.job.CallID, AccountID: c.job.AccountID, Logo: !haveLogo}
		// A sheet is worth waiting for; a logo alone is not, past a few seconds.
		wait := 5 * time.Second
		if own && !haveSheet {
			req.AvatarID, wait = id, 15*time.Second
		}
		lctx, cancel := context.WithTimeout(ctx, wait)
		s, err := sheets.AvatarSheet(lctx, req)
		if err == nil && req.AvatarID != "" {
			if sh, err = avatar.LoadSheet(lctx, &http.Client{}, s); err == nil {
				c.r.sheets.Put(sh)
				haveSheet = true
			}
		}
		cancel()
		if err != nil {
			c.log.Warn("the avatar's sheet or logo could not be read", "avatar_id", req.AvatarID, "logo", req.Logo, "err", err)
		}
		if s.Logo != nil {
			if img, err := avatar.DecodeLogo(s.Logo.Data); err != nil {
				c.log.Warn("the account's logo does not decode; the connecting screen shows none", "err", err)
			} else {
				logo = img
				c.r.logos.Put(c.job.AccountID, s.Logo.SHA256, img)
			}
		}
	}
	switch {
	case isBuiltin:
		return avatar.NewScene(builtin, c.job.Version.Framing, cfg.Width, cfg.Height), logo
	case haveSheet:
		return avatar.NewSheetScene(sh.Avatar, sh.Images, cfg.Width, cfg.Height), logo
	case own && canAsk:
		c.log.Warn("the avatar's sheet could not be read; using the default", "avatar_id", id)
	default:
		c.log.Warn("unknown avatar; using the default", "avatar_id", id)
	}
	return avatar.NewScene(avatar.Default(), c.job.Version.Framing, cfg.Width, cfg.Height), logo
}

// tracks are the tracks the call publishes; video is nil on an audio call.
type tracks struct {
	audio, video *lksdk.LocalTrack
}

// makeTracks makes the audio track with its speaker and, on a video call, the video
// track with its painter; each starts sending once bound.
func (c *call) makeTracks(ctx context.Context) (tracks, error) {
	cfg := c.r.cfg
	var t tracks
	var err error
	t.audio, err = lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2})
	if err != nil {
		return t, fmt.Errorf("audio track: %w", err)
	}
	if c.speaker, err = newSpeaker(func(s media.Sample) error { return t.audio.WriteSample(s, nil) }); err != nil {
		return t, err
	}
	c.speaker.tap = func(pcm []int16, at time.Time) { c.recordSide(recording.Assistant, pcm, outRate, at) }
	t.audio.OnBind(func() { c.afterCaller(ctx, c.speaker.run, c.speaker.enc.Close) })
	if !c.video {
		return t, nil
	}
	scene, logo := c.look(ctx)
	enc, err := vp8.NewEncoder(vp8.EncoderConfig{Width: cfg.Width, Height: cfg.Height, FPS: cfg.FPS, BitrateKbps: cfg.VideoKbps})
	if err != nil {
		return t, err
	}
	c.painter = &painter{
		w: cfg.Width, h: cfg.Height, fps: cfg.FPS, idleFPS: cfg.IdleFPS, enc: enc,
		connecting: avatar.NewConnecting(c.job.Brand, logo, cfg.Width, cfg.Height),
		scene:      scene,
		mouth:      c.speaker.Mouth,
		firstFrame: c.firstFrame,
	}
	t.video, err = lksdk.NewLocalTrack(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000},
		lksdk.WithRTCPHandler(func(p rtcp.Packet) {
			switch p.(type) {
			case *rtcp.PictureLossIndication, *rtcp.FullIntraRequest:
				c.painter.keyframe.Store(true)
			}
		}))
	if err != nil {
		enc.Close()
		return t, fmt.Errorf("video track: %w", err)
	}
	c.painter.out = func(s media.Sample) error { return t.video.WriteSample(s, nil) }
	t.video.OnBind(func() { c.afterCaller(ctx, c.painter.run, c.painter.enc.Close) })
	return t, nil
}

// join joins the room (from joining), publishes the tracks and subscribes to the
// caller's audio. The room's callbacks end the call (the caller left, the room went
// away), feed the listener and track the subscriptions that verify outbound media.
func (c *call) join(t tracks, joining time.Time) error {
	cfg := c.r.cfg
	cb := lksdk.NewRoomCallback()
	cb.OnParticipantConnected = func(rp *lksdk.RemoteParticipant) {
		if c.isCaller(rp) {
			c.callerArrived(time.Now())
		}
	}
	cb.OnParticipantDisconnected = func(rp *lksdk.RemoteParticipant) {
		if c.isCaller(rp) {
			c.end(EndCallerHangup)
		}
	}
	cb.OnDisconnected = func() { c.end(EndRoomClosed) }
	cb.OnTrackPublished = func(pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
		c.maybeSubscribe(pub, rp)
	}
	cb.OnTrackSubscribed = func(track *webrtc.TrackRemote, pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
		if !c.isCaller(rp) {
			return
		}
		switch track.Kind() {
		case webrtc.RTPCodecTypeAudio:
			go func() {
				st := c.listener.read(track)
				c.log.Info("caller audio ended", "packets", st.packets, "lost_packets", st.lost,
					"late_packets", st.late, "stalls", st.stalls, "stalled_ms", st.stalled*1000/speech.Rate)
			}()
		case webrtc.RTPCodecTypeVideo:
			if source := c.viewer.sourceOf(pub.Source()); source != "" {
				go c.viewer.watch(track, source, rp)
			}
		}
	}
	cb.OnLocalTrackSubscribed = func(pub *lksdk.LocalTrackPublication, _ *lksdk.LocalParticipant) {
		c.trackSubscribed(pub.SID())
	}
	cb.OnDataPacket = func(data lksdk.DataPacket, params lksdk.DataReceiveParams) {
		// LiveKit's SIP bridge sends each key the phone presses as a SipDTMF packet.
		if d, ok := data.(*livekit.SipDTMF); ok && d.Digit != "" && params.Sender != nil && c.isCaller(params.Sender) {
			select {
			case c.keys <- speech.Key{Digit: d.Digit, At: time.Now()}:
			default:
				c.log.Warn("caller's keys not read; dropping", "digit", d.Digit)
			}
		}
		// The control plane tells of a failed transfer through LiveKit's server API: such
		// a packet names no sender (a participant's always does).
		if u, ok := data.(*lksdk.UserDataPacket); ok && u.Topic == persona.TransferTopic && params.SenderIdentity == "" {
			c.transferNotice(u.Payload)
		}
	}

	room, err := lksdk.ConnectToRoomWithToken(c.lk.URL, c.lk.Token, cb, lksdk.WithAutoSubscribe(false))
	if err != nil {
		return fmt.Errorf("join room: %w", err)
	}
	c.room = room
	if cfg.OnJoined != nil {
		cfg.OnJoined(c.job, time.Now())
	}
	c.log.Info("joined", "after_answer_ms", c.sinceAnswer(time.Now()), "join_ms", time.Since(joining).Milliseconds())

	publish := func(t *lksdk.LocalTrack, opts *lksdk.TrackPublicationOptions) error {
		pub, err := room.LocalParticipant.PublishTrack(t, opts)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.ours[pub.SID()] = true
		if opts.Source == livekit.TrackSource_MICROPHONE {
			c.audioSID = pub.SID()
		}
		c.mu.Unlock()
		return nil
	}
	if t.video != nil {
		if err := publish(t.video, &lksdk.TrackPublicationOptions{Name: "assistant-video", Source: livekit.TrackSource_CAMERA, VideoWidth: cfg.Width, VideoHeight: cfg.Height}); err != nil {
			return fmt.Errorf("publish video: %w", err)
		}
	}
	if err := publish(t.audio, &lksdk.TrackPublicationOptions{Name: "assistant-audio", Source: livekit.TrackSource_MICROPHONE}); err != nil {
		return fmt.Errorf("publish audio: %w", err)
	}
	c.checkSubscriptions()
	caps := newCaptions(c, room)
	c.mu.Lock()
	c.captions = caps
	c.mu.Unlock()
	c.start(context.Background(), caps.run)
	for _, rp := range room.GetRemoteParticipants() {
		if c.isCaller(rp) {
			c.callerArrived(time.Now())
		}
		for _, tp := range rp.TrackPublications() {
			if pub, ok := tp.(*lksdk.RemoteTrackPublication); ok {
				c.maybeSubscribe(pub, rp)
			}
		}
	}
	return nil
}

// verify waits, within the bound from joining, for media both ways: the caller's audio
// decodes, and the caller is subscribed to every track we publish. On a video call the
// caller must also have been sent a keyframe of the connecting screen, which then stays
// up for the dwell.
func (c *call) verify(ctx context.Context, joined time.Time) *ending {
	cfg := c.r.cfg
	bound := time.NewTimer(cfg.VerifyTimeout - time.Since(joined))
	defer bound.Stop()
	var keyframe <-chan time.Time
	var dwell <-chan time.Time
	for inOK, outOK := false, false; !inOK || !outOK; {
		select {
		case <-c.listener.verified:
			inOK = true
			c.listener.verified = nil
			c.log.Debug("caller audio decoded", "after_answer_ms", c.sinceAnswer(time.Now()))
		case <-c.subsOK:
			c.subsOK = nil
			c.log.Debug("caller subscribed to our tracks", "after_answer_ms", c.sinceAnswer(time.Now()))
			if c.painter == nil {
				outOK = true
			} else {
				keyframe = c.painter.nextKeyframe()
			}
		case at := <-keyframe:
			keyframe = nil
			c.log.Debug("connecting keyframe sent to the caller", "after_answer_ms", c.sinceAnswer(at))
			dwell = time.After(cfg.ConnectingDwell - time.Since(at))
		case <-dwell:
			outOK = true
		case <-bound.C:
			c.log.Warn("media not verified in time", "caller_audio", inOK, "caller_subscribed", outOK)
			return &ending{reason: EndMediaFailed}
		case reason := <-c.ended:
			return &ending{reason: reason}
		case <-ctx.Done():
			return c.cancelled(ctx)
		}
	}
	return nil
}

// callerGrace is how long past the job's JoinBy a web call's worker still waits for its
// caller: the control plane's sweeper ends a call whose caller did not join by then (and
// deletes its room), so this bound only matters when the control plane cannot.
const callerGrace = 10 * time.Second

// awaitCaller waits in the room for a web call's caller, until the job's JoinBy (and a
// grace), and returns when it came: the call's answer.
func (c *call) awaitCaller(ctx context.Context) (time.Time, *ending) {
	bound := time.NewTimer(time.Until(c.job.JoinBy) + callerGrace)
	defer bound.Stop()
	select {
	case <-c.callerIn:
		c.mu.Lock()
		defer c.mu.Unlock()
		c.log.Info("caller joined", "waited_ms", c.answered.Sub(c.lk.Offered).Milliseconds())
		return c.answered, nil
	case reason := <-c.ended:
		return time.Time{}, &ending{reason: reason}
	case <-ctx.Done():
		return time.Time{}, c.cancelled(ctx)
	case <-bound.C:
		c.log.Warn("the caller did not join")
		return time.Time{}, &ending{reason: persona.EndCallerAbsent}
	}
}

// greet switches to the avatar and plays the greeting once it is synthesised; the
// greeting reports its start and records what the caller heard of it as it plays.
func (c *call) greet(ctx context.Context, greeting <-chan synthesis) *ending {
	if c.painter != nil {
		c.painter.showAvatar(time.Now())
	}
	var g synthesis
	select {
	case g = <-greeting:
	case reason := <-c.ended:
		return &ending{reason: reason}
	case <-ctx.Done():
		return c.cancelled(ctx)
	}
	if g.err != nil {
		return failed(fmt.Errorf("synthesize greeting: %w", g.err))
	}
	if len(g.pcm.Samples) == 0 {
		return nil
	}
	gr, err := conversation.Greet(&Call{c: c}, c.job.Version.Greeting, g.pcm)
	if err != nil {
		return failed(fmt.Errorf("greeting: %w", err))
	}
	c.start(ctx, func(ctx context.Context) { gr.Follow(ctx, c.greetingStarted) })
	return nil
}

// converse runs the conversation until the call ends. When the call ends first, the
// conversation is stopped and given a moment to record its last turns (what was heard
// of a reply cut by the hang-up) before the ended report is built.
func (c *call) converse(ctx context.Context) ending {
	done := make(chan error, 1)
	convCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { done <- c.r.cfg.Conversation.Converse(convCtx, &Call{c: c}) }()
	stopConversation := func() {
		stop()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			c.log.Warn("conversation did not stop within 2 s of the call ending")
		}
	}
	select {
	case reason := <-c.ended:
		stopConversation()
		return ending{reason: reason}
	case <-ctx.Done():
		stopConversation()
		return *c.cancelled(ctx)
	case err := <-done:
		var hungUp *conversation.HangUp
		switch {
		case errors.As(err, &hungUp):
			return ending{reason: hungUp.Reason} // silence_timeout, max_duration
		case err != nil && convCtx.Err() == nil:
			return *failed(fmt.Errorf("conversation: %w", err))
		}
		return ending{reason: EndAssistantHangup}
	}
}

// cancelled is the ending of a call whose context ended: LiveKit terminated the job, or
// the worker stopped.
func (c *call) cancelled(ctx context.Context) *ending {
	if errors.Is(context.Cause(ctx), agent.ErrJobTerminated) {
		return &ending{reason: EndTerminated}
	}
	return &ending{reason: EndWorkerShutdown}
}

// start runs a media loop owned by the call; finish waits for it.
func (c *call) start(ctx context.Context, loop func(context.Context)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		loop(ctx)
	}()
}

func (c *call) isCaller(rp *lksdk.RemoteParticipant) bool {
	if c.job.CallerIdentity != "" {
		return rp.Identity() == c.job.CallerIdentity
	}
	return rp.Kind() != lksdk.ParticipantAgent
}

// maybeSubscribe subscribes to the caller's audio, and to the caller's video of the
// sources the version's vision shows.
func (c *call) maybeSubscribe(pub *lksdk.RemoteTrackPublication, rp *lksdk.RemoteParticipant) {
	wanted := pub.Kind() == lksdk.TrackKindAudio || pub.Kind() == lksdk.TrackKindVideo && c.viewer.sourceOf(pub.Source()) != ""
	if !c.isCaller(rp) || !wanted {
		return
	}
	// Our own record, not pub.IsSubscribed, which the SDK reads without its lock.
	c.mu.Lock()
	asked := c.requested[pub.SID()]
	c.requested[pub.SID()] = true
	c.mu.Unlock()
	if asked {
		return
	}
	if err := pub.SetSubscribed(true); err != nil {
		c.log.Warn("subscribe to caller track", "kind", pub.Kind(), "err", err)
	}
}

func (c *call) trackSubscribed(sid string) {
	c.mu.Lock()
	c.subscribed[sid] = true
	c.mu.Unlock()
	c.checkSubscriptions()
}

// checkSubscriptions closes subsOK once every track we published has a subscriber.
func (c *call) checkSubscriptions() {
	c.mu.Lock()
	want := 1
	if c.video {
		want = 2
	}
	all := len(c.ours) == want
	for sid := range c.ours {
		all = all && c.subscribed[sid]
	}
	c.mu.Unlock()
	if all {
		c.subsOnce.Do(func() { close(c.subsOK) })
	}
}

func (c *call) firstFrame(at time.Time, s screen) {
	if s != showConnecting {
		return
	}
	ms := c.sinceAnswer(at)
	c.mu.Lock()
	c.metrics.ConnectingScreenMS = &ms
	c.mu.Unlock()
	c.log.Info("connecting screen out", "after_answer_ms", ms)
	c.report(persona.ReportConnecting)
}

func (c *call) greetingStarted(at time.Time) {
	ms := c.sinceAnswer(at)
	c.mu.Lock()
	c.metrics.FirstGreetingMS = &ms
	c.mu.Unlock()
	c.log.Info("greeting started", "after_answer_ms", ms)
	c.report(persona.ReportGreeting)
}

// finish leaves the room, stops the media loops (the greeting's record among them) and
// sends the ended report; then it stores a recorded call's file and sends the recording
// report, so that an upload never holds the transcript back (call.ended waits for the
// ended report only so long). The report returned is the ended one, with the recording's
// result beside it.
func (c *call) finish(reason string) persona.Report {
	if c.stop != nil {
		c.stop()
	}
	c.mu.Lock()
	c.finished = true
	c.mu.Unlock()
	c.mu.Lock()
	caps := c.captions
	c.mu.Unlock()
	if caps != nil {
		caps.close()
	}
	if c.room != nil {
		c.room.Disconnect()
	}
	c.loops.Wait()
	end := time.Now()

	c.mu.Lock()
	usage := c.record.Usage()
	rep := persona.Report{
		Kind: persona.ReportEnded, CallID: c.job.CallID, SessionID: c.job.SessionID,
		At: end.UTC(), EndReason: reason, Metrics: c.metricsLocked(), Transcript: c.record.Transcript(),
		Usage: &usage, ResponseSamplesMS: c.record.ResponseSamplesMS(),
	}
	if c.amd != nil {
		a := *c.amd
		rep.AMD = &a
	}
	if c.job.Version.Analysis != nil {
		// The worker analyses the call after this report (the worker package's Analyst),
		// so that the call's end is never held for the model.
		rep.Analysis = &persona.AnalysisResult{Status: persona.AnalysisPending}
	}
	c.mu.Unlock()
	c.log.Info("call ended", "reason", reason)

	c.mu.Lock()
	c.reportsClosed = true
	c.mu.Unlock()
	c.reports <- rep
	if stored := c.storeRecording(end); stored != nil {
		rep.Recording = stored
		c.reports <- persona.Report{Kind: persona.ReportRecording, CallID: c.job.CallID, SessionID: c.job.SessionID,
			At: time.Now().UTC(), Recording: stored}
	}
	close(c.reports)
	select {
	case <-c.reportsDone:
	case <-time.After(45 * time.Second):
		c.log.Error("ended report still unsent; giving up on it")
	}
	return rep
}
