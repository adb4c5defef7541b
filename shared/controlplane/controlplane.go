// Package controlplane assembles Bridgeline's control plane once: every service (accounts,
// assistants, lines, webhook endpoints, sessions), the customer_decides asker, the
// sweeper and the route table, from one config.Config and the outside parts (Deps). The
// local stack (cmd/bridgeline dev), every Lambda (functions/internal/wire) and the test
// harness (e2e/harness) call New; what stays in each is the choice of
// parts: SQLite or DynamoDB, the in-process sim or the platform gateway, the local
// delivery worker or SQS.
//
// It imports no LiveKit package: LiveKit reaches it as Deps.Rooms and Deps.LiveKit,
// which only the mains that talk to LiveKit build, so a function that never does links
// none of LiveKit's SDK.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/store"
	"github.com/bridgeline/bridgeline/shared/toolcall"
	"github.com/bridgeline/bridgeline/shared/usage"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// Deps are the parts the control plane runs on, chosen by the caller.
type Deps struct {
	// Store keeps every record (store/sqlite or store/dynamo).
	Store store.Store
	// Rooms is LiveKit as the session service uses it (lkhttp.Client on AWS,
	// lkapi.Client locally); nil: session.NoRooms, which only knows the configured rtc_url
	// and refuses everything else (a function that never talks to LiveKit).
	Rooms session.Rooms
	// LiveKit verifies LiveKit's webhooks (the same client); nil: that receiver answers
	// 401. The persona workers' reports are verified with cfg.PersonaReportSecret instead.
	LiveKit httpapi.LiveKitVerifier
	// Platforms are the calling-platform adapters (the in-process sim, or the platform
	// gateway's client), each registered under its own name; SimSecret verifies the sim's
	// notifications (empty leaves the platform-sim route out).
	Platforms []platform.Platform
	SimSecret string
	// SIP is LiveKit's SIP API (shared/rtc/lkhttp's Client). With it the control plane
	// keeps LiveKit's SIP trunks and dispatch rules in step with the customers' trunks
	// and SIP lines, and the sip platform is registered beside Platforms (its calls are
	// placed, hung up and transferred through it). Nil: trunks and lines are kept
	// without touching LiveKit, and no SIP call is placed (a function that never talks to
	// LiveKit).
	SIP SIPLiveKit
	// SIPSecret verifies the SIP gateway's notifications (empty leaves the platform-sip
	// route out).
	SIPSecret string
	// SIPVideo is the SIP video bridge video sessions on SIP lines ring phones through
	// (mediafleet/sipvideo in-process, or its control endpoint); nil: SIP is audio only.
	SIPVideo sip.VideoDialer
	// NotificationReplays keeps the ids of the platform notifications received, so a
	// replayed one is refused: nil keeps them in this process's memory (the local
	// stack); Lambdas share them in the idempotency table (simhook.StoreReplays).
	NotificationReplays simhook.Replays
	// LocalDelivery runs webhook deliveries from the store's outbox (ControlPlane.Delivery,
	// which the caller runs); otherwise Redeliver puts events back on the delivery path
	// (the AWS queue), and nil refuses redeliveries.
	LocalDelivery bool
	Redeliver     httpapi.Redeliverer
	// DecisionReserve is what an inbound request needs after the customer's decision
	// (session.Service.DecisionReserve; Lambdas, whose requests have a deadline).
	DecisionReserve time.Duration
	// Secrets seals webhook signing secrets at rest (secretbox: a key file locally, KMS
	// on AWS); nil stores them in clear (tests).
	Secrets webhookendpoint.Sealer
	// RateLimiter is the per-account request limit: nil is an in-process one at
	// cfg.RateLimit and cfg.RateBurst (the local stack); Lambdas share one in DynamoDB
	// (or httpapi.Unlimited).
	RateLimiter httpapi.RateLimiter
	// ToolClient posts the assistants' tool calls to the customers' URLs: nil is
	// toolcall.NewClient(cfg.Webhooks), the egress rules of webhook deliveries (tests
	// give one whose resolver answers internal addresses).
	ToolClient *http.Client
	// Recordings keeps the recorded calls' files (shared/recordings: an S3 bucket on AWS,
	// a folder locally) for GET and DELETE /v1/calls/{id}/recording; nil answers those
	// with an error once a call has a recording (a function that serves neither).
	Recordings call.RecordingFiles
	// AvatarAssets keeps the images of the accounts' own avatars (shared/avatars: an S3
	// bucket on AWS, a folder locally); nil answers the routes that need them with an
	// error (a function that serves none).
	AvatarAssets avatars.Assets
	// Routes are served beside the control plane's own (the local stack's sim pages).
	Routes []httpapi.Route
	// JoinPage holds the hosted join page's files (shared/joinpage/assets.FS): given by
	// the processes that serve the page (the local stack, the join-page function); nil
	// answers 503 on its route, so every other function links none of it.
	JoinPage fs.FS
	// Later runs the work that goes on after a request answered (session.WithLater):
	// nil, a goroutine; a Lambda, which stops when it answers, runs it in place.
	Later func(task func())
	// TransferQueue takes API transfers for another process to run
	// (session.WithTransferQueue: on AWS the call-transfers function, through SQS); nil:
	// Later runs them.
	TransferQueue session.TransferQueue
	// JoinTimeout is how long a web call waits for its caller (0: session's default).
	// Tests shorten it; every process of one deployment must agree on it, since the
	// sweep index keeps each session's deadline as the last writer computed it.
	JoinTimeout time.Duration
	// Log receives the control plane's logs (nil: discarded); Now is the clock (nil:
	// time.Now).
	Log *slog.Logger
	Now func() time.Time
}

// ControlPlane is the assembled control plane.
type ControlPlane struct {
	Config config.Config
	Store  store.Store
	// API is the route table and its middleware: Handler for the local stack,
	// FunctionHandler for one Lambda.
	API        *httpapi.API
	Accounts   *account.Service
	Assistants *assistant.Service
	Avatars    *avatars.Service
	Lines      *line.Service
	Endpoints  *webhookendpoint.Service
	Sessions   *session.Service
	// Trunks keeps SIP trunks and SIP lines, and LiveKit in step with them.
	Trunks *siptrunk.Service
	// Asker runs customer_decides for inbound calls.
	Asker *decision.Asker
	// Deliverer makes one webhook attempt (the AWS webhook-deliver function's and the
	// local worker's).
	Deliverer *delivery.Deliverer
	// Delivery is the local outbox worker (Deps.LocalDelivery), nil otherwise; run it
	// with RunDelivery.
	Delivery *delivery.Worker
	// Tools runs the persona workers' tool calls.
	Tools *toolcall.Service
	// Campaigns applies the campaign rules; CampaignRunner dials their recipients
	// (RunCampaigns locally, the campaign-runner function on AWS).
	Campaigns      *campaign.Service
	CampaignRunner *campaign.Runner
	// Erasure deletes calls' data: DELETE /v1/calls/{id}, and the accounts' retention
	// (RunSweeper runs it where the store keeps retention settings).
	Erasure erasure.Service
}

// New validates cfg and builds the control plane over deps.
func New(cfg config.Config, deps Deps) (*ControlPlane, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Store == nil {
		return nil, errors.New("controlplane: no store")
	}
	s := deps.Store
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	rooms := deps.Rooms
	if rooms == nil {
		rooms = session.NoRooms{Public: cfg.LiveKitPublicURL}
	}
	cp := &ControlPlane{Config: cfg, Store: s}
	cp.Accounts = &account.Service{Store: s, Now: now}
	cp.Assistants = &assistant.Service{Store: s, HostedVoices: cfg.HostedVoices, Models: cfg.Models, VisionModels: cfg.VisionModels, Languages: cfg.Languages, Secrets: deps.Secrets,
		Destinations: cfg.Webhooks, MaxCallDuration: cfg.MaxSession, Now: now}
	cp.Avatars = &avatars.Service{Store: s, Assets: avatarAssets(deps.AvatarAssets), Assistants: s, Now: now}
	cp.Assistants.OwnAvatars = cp.Avatars
	cp.Lines = &line.Service{Store: s, Assistants: s, Now: now}
	cp.Trunks = &siptrunk.Service{Store: s, Lines: s, LineRules: cp.Lines, Calls: s, Secrets: deps.Secrets,
		Origination: siptrunk.Origination{Host: cfg.SIPPublicHost, Port: cfg.SIPPublicPort}, VideoOrigination: videoOrigination(cfg),
		Destinations: cfg.Webhooks, Log: log, Now: now}
	plats := deps.Platforms
	if deps.SIP != nil {
		cp.Trunks.LiveKit = deps.SIP
		plats = append(slices.Clone(plats), &sip.Adapter{LiveKit: deps.SIP, Calls: s, Video: deps.SIPVideo, Outbound: cp.Trunks.OutboundTrunk, OutboundConfig: cp.Trunks.OutboundConfig,
			Dialable: cp.Trunks.CheckDial})
	}
	platforms, err := platform.NewRegistry(plats...)
	if err != nil {
		return nil, err
	}
	cp.Endpoints = &webhookendpoint.Service{Store: s, Secrets: deps.Secrets, Destinations: cfg.Webhooks}
	cp.Deliverer = &delivery.Deliverer{Endpoints: cp.Endpoints, Client: delivery.NewClient(cfg.Webhooks)}

	// call.incoming waits as long as the line's decision timeout says, not the
	// deliverer's own bound.
	askClient := delivery.NewClient(cfg.Webhooks)
	askClient.Timeout = 0
	cp.Asker = &decision.Asker{Store: s, Events: s, Subscribers: cp.Endpoints, Logger: log,
		Deliverer: &delivery.Deliverer{Endpoints: cp.Endpoints, Client: askClient}}

	redeliver := deps.Redeliver
	var notify func()
	if deps.LocalDelivery {
		cp.Delivery = &delivery.Worker{Outbox: s, Log: s, Subscribers: cp.Endpoints, Deliverer: cp.Deliverer, Logger: log}
		notify = cp.Delivery.Notify
		redeliver = &delivery.OutboxRedeliverer{Outbox: s, Notify: notify}
	}
	if redeliver == nil {
		redeliver = noRedelivery{}
	}

	sessionOpts := []session.Option{session.WithPlatforms(platforms), session.WithDecider(cp.Asker),
		session.WithDecisionReserve(deps.DecisionReserve), session.WithMaxDuration(cfg.MaxSession),
		session.WithDispatchTimeout(cfg.AssistantDispatchTimeout), session.WithMaxConcurrentSessions(cfg.MaxConcurrentSessions),
		session.WithSubscriptions(cp.Endpoints), session.WithLater(deps.Later), session.WithLog(log), session.WithClock(now),
		session.WithCallEnded(cp.callEnded)}
	if notify != nil {
		sessionOpts = append(sessionOpts, session.WithWriteNotify(notify))
	}
	if deps.TransferQueue != nil {
		sessionOpts = append(sessionOpts, session.WithTransferQueue(deps.TransferQueue))
	}
	if deps.JoinTimeout > 0 {
		sessionOpts = append(sessionOpts, session.WithJoinTimeout(deps.JoinTimeout))
	}
	if cp.Sessions, err = session.New(s, rooms, sessionOpts...); err != nil {
		return nil, err
	}
	cp.Asker.CheckVariables = cp.Sessions.CheckAnswerVariables
	cp.Campaigns = &campaign.Service{Store: s, Lines: s, Assistants: s, Accounts: s, Calls: s, Platforms: platforms,
		MaxConcurrentSessions: cfg.MaxConcurrentSessions, Log: log, Now: now}
	cp.CampaignRunner = &campaign.Runner{Service: cp.Campaigns, Dialer: cp.Sessions}

	page, err := joinpage.Handler(deps.JoinPage, cfg.LiveKitPublicURL)
	if err != nil {
		return nil, err
	}
	toolClient := deps.ToolClient
	if toolClient == nil {
		toolClient = toolcall.NewClient(cfg.Webhooks)
	}
	cp.Tools = &toolcall.Service{Records: s, Secrets: cp.Assistants, Client: toolClient, Log: log, Now: now}

	cp.Erasure = erasure.Service{Store: s, Files: recordingFiles(deps.Recordings), Now: now, Log: log}
	routes := slices.Concat(
		(&httpapi.Assistants{Service: cp.Assistants}).Routes(),
		(&httpapi.Avatars{Service: cp.Avatars}).Routes(),
		(&httpapi.Lines{Service: cp.Lines}).Routes(),
		(&httpapi.SIPTrunks{Service: cp.Trunks}).Routes(),
		(&httpapi.Keys{Accounts: s, Now: now}).Routes(),
		(&httpapi.Webhooks{Endpoints: cp.Endpoints, Events: s, Redeliver: redeliver}).Routes(),
		(&httpapi.CallAnswers{Decisions: s, Calls: s, CheckVariables: cp.Sessions.CheckAnswerVariables,
			Decided: cp.Sessions.DecisionRecorded, Now: now}).Routes(),
		(&httpapi.Sessions{Service: cp.Sessions, JoinPageURL: cfg.JoinPageURL}).Routes(),
		(&httpapi.Campaigns{Service: cp.Campaigns, Woken: cp.CampaignRunner.Wake}).Routes(),
		(&httpapi.Usage{Reader: usage.Reader{Store: s, Now: now}}).Routes(),
		(&httpapi.Quality{Versions: cp.Assistants, Store: s}).Routes(),
		(&httpapi.Recordings{Service: call.Recordings{Store: s, Files: recordingFiles(deps.Recordings), Now: now}}).Routes(),
		(&httpapi.CallErasure{Service: cp.Erasure}).Routes(),
		httpapi.Passthrough("join-page", page, joinpage.Patterns...),
		httpapi.Passthrough("join-info", joinpage.InfoHandler(s, lktoken.KeyPair(cfg.LiveKitAPIKey, cfg.LiveKitSecret)), joinpage.InfoPatterns...),
		(&httpapi.AccountSettings{Accounts: s, Destinations: cfg.Webhooks, Now: now}).Routes(),
		(&httpapi.Receivers{Sessions: cp.Sessions, RTC: deps.LiveKit, ReportSecret: cfg.PersonaReportSecret,
			AgentTokens: agentTokens(cfg), Avatars: cp.Avatars, Logos: s, Tools: cp.Tools, SimSecret: deps.SimSecret, SIPSecret: deps.SIPSecret, Replays: deps.NotificationReplays, Now: now}).Routes(),
		deps.Routes,
	)
	limiter := deps.RateLimiter
	if limiter == nil {
		limiter = httpapi.NewLimiter(cfg.RateLimit, cfg.RateBurst)
	}
	cp.API, err = httpapi.New(s, s, routes, httpapi.WithLimiter(limiter),
		httpapi.WithLog(log), httpapi.WithClock(now))
	if err != nil {
		return nil, err
	}
	return cp, nil
}

// Handler serves every route with API-key auth: the local stack and the tests.
func (cp *ControlPlane) Handler() http.Handler { return cp.API.Handler() }

// FunctionHandler serves the routes of one Lambda function, authenticated by API
// Gateway's authorizer context.
func (cp *ControlPlane) FunctionHandler(function string) (http.Handler, error) {
	return cp.API.FunctionHandler(function, cp.API.LambdaAuth)
}

// ReconcileEvery is how often the local sweeper brings LiveKit's SIP trunks and rules in
// step with the stored trunks (each AWS sweeper invocation does it once).
const ReconcileEvery = 30 * time.Second

// RetainEvery is how often the local sweeper runs the accounts' call retention
// (erasure.Service.Retain).
const RetainEvery = time.Minute

// RunSweeper sweeps every tick until ctx ends (the local stack and the tests), reconciles
// the SIP trunks with LiveKit every ReconcileEvery, and runs the accounts' call retention
// every RetainEvery where the store keeps retention settings.
func (cp *ControlPlane) RunSweeper(ctx context.Context, every time.Duration) {
	if rs, ok := cp.Store.(erasure.RetentionStore); ok {
		retained := make(chan struct{})
		defer func() { <-retained }()
		go func() {
			defer close(retained)
			cp.Erasure.RunRetention(ctx, rs, RetainEvery)
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ReconcileEvery)
		defer t.Stop()
		for {
			cp.reconcile(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	cp.Sessions.RunSweeper(ctx, every)
	<-done
}

// reconcile runs the SIP trunks' Reconcile once; a failure is logged (the next one
// retries).
func (cp *ControlPlane) reconcile(ctx context.Context) {
	if err := cp.Trunks.Reconcile(ctx); err != nil && ctx.Err() == nil {
		cp.Trunks.Log.Error("reconcile SIP trunks with LiveKit", "err", err)
	}
}

// SweepHandler is the AWS session-sweeper's handler: each invocation reconciles the SIP
// trunks with LiveKit once, runs the accounts' call retention once, and sweeps every
// tick for the configured window (SWEEP_WINDOW_SECONDS).
func (cp *ControlPlane) SweepHandler(tick time.Duration) func(context.Context) error {
	sweep := cp.Sessions.SweepHandler(cp.Config.SweepWindow, tick)
	return func(ctx context.Context) error {
		cp.reconcile(ctx)
		// The accounts' call retention, once per invocation (every minute), beside the
		// sweep so that a long run of it delays no session's end.
		retained := make(chan struct{})
		go func() {
			defer close(retained)
			if rs, ok := cp.Store.(erasure.RetentionStore); ok {
				if _, err := cp.Erasure.Retain(ctx, rs); err != nil && ctx.Err() == nil {
					cp.Erasure.Log.Error("retention", "err", err)
				}
			}
		}()
		err := sweep(ctx)
		<-retained
		return err
	}
}

// SIPLiveKit is LiveKit's SIP API as the control plane uses it: trunks and dispatch
// rules, and the calls.
type SIPLiveKit interface {
	siptrunk.LiveKit
	sip.LiveKit
}

// callEnded settles the campaign recipient of a call that ended (a call of no campaign
// costs nothing), and wakes this process's runner: a slot is free.
func (cp *ControlPlane) callEnded(ctx context.Context, c call.Call) {
	if c.CampaignID == "" || cp.Campaigns == nil {
		return
	}
	cp.Campaigns.CallEnded(ctx, c)
	cp.CampaignRunner.Wake()
}

// CampaignTick is how often the local runner works the active campaigns (and at once
// when a campaign's call ends or a campaign starts).
const CampaignTick = 500 * time.Millisecond

// RunCampaigns runs the campaign runner until ctx ends (the local stack and the tests).
func (cp *ControlPlane) RunCampaigns(ctx context.Context) { cp.CampaignRunner.Run(ctx, CampaignTick) }

// RunDelivery runs the local delivery worker until ctx ends.
func (cp *ControlPlane) RunDelivery(ctx context.Context) error {
	if cp.Delivery == nil {
		return errors.New("controlplane: no local delivery (Deps.LocalDelivery)")
	}
	return cp.Delivery.Run(ctx)
}

// noRedelivery refuses redeliveries where there is no delivery path (a Lambda other than
// events-redeliver, which alone is given the queue).
type noRedelivery struct{}

func (noRedelivery) Redeliver(context.Context, callevent.Event, []string) error {
	return fmt.Errorf("this process has no delivery path for redeliveries")
}

// noRecordingFiles is the recordings' store of a process given none.
type noRecordingFiles struct{}

var errNoRecordingFiles = errors.New("this process has no recordings store")

func (noRecordingFiles) URL(context.Context, string, time.Duration) (string, time.Time, error) {
	return "", time.Time{}, errNoRecordingFiles
}

func (noRecordingFiles) Delete(context.Context, string) error { return errNoRecordingFiles }

func (noRecordingFiles) Exists(context.Context, string) (bool, error) {
	return false, errNoRecordingFiles
}

func recordingFiles(f call.RecordingFiles) call.RecordingFiles {
	if f == nil {
		return noRecordingFiles{}
	}
	return f
}

func avatarAssets(a avatars.Assets) avatars.Assets {
	if a == nil {
		return noAvatarAssets{}
	}
	return a
}

// noAvatarAssets is the asset store of a process given none.
type noAvatarAssets struct{}

var errNoAvatarAssets = errors.New("this process keeps no avatar assets (AVATAR_ASSETS_BUCKET)")

func (noAvatarAssets) Put(context.Context, string, []byte, string) error { return errNoAvatarAssets }
func (noAvatarAssets) Get(context.Context, string) ([]byte, error)       { return nil, errNoAvatarAssets }
func (noAvatarAssets) URL(context.Context, string, time.Duration) (string, time.Time, error) {
	return "", time.Time{}, errNoAvatarAssets
}
func (noAvatarAssets) Delete(context.Context, string) error { return errNoAvatarAssets }

// agentTokens mints the persona workers' registration tokens with the LiveKit key and
// secret of cfg; nil without them (a function given no LiveKit credentials).
func agentTokens(cfg config.Config) func(time.Time) (persona.AgentToken, error) {
	if cfg.LiveKitAPIKey == "" || cfg.LiveKitSecret == "" {
		return nil
	}
	return func(now time.Time) (persona.AgentToken, error) {
		return persona.MintAgentToken(cfg.LiveKitAPIKey, cfg.LiveKitSecret, now)
	}
}

// videoOrigination is the SIP video bridge's public address, none when no bridge runs.
func videoOrigination(cfg config.Config) siptrunk.Origination {
	if cfg.SIPVideoPublicPort == 0 {
		return siptrunk.Origination{}
	}
	return siptrunk.Origination{Host: cfg.SIPPublicHost, Port: cfg.SIPVideoPublicPort}
}
