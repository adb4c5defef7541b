// Package agent is a LiveKit agent worker: it registers with livekit-server over the
// `/agent` websocket (the livekit.WorkerMessage / livekit.ServerMessage protocol), answers
// job offers up to a load limit, hands assigned jobs to a Handler, reports its load, and
// drains on request: it stops taking jobs and lets running ones finish.
//
// It knows nothing about media; the persona pipeline is the Handler.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/proto"
)

// Job is an assigned job: the dispatch LiveKit handed to this worker and what the worker
// needs to join the room.
type Job struct {
	ID       string
	Room     string // room name
	Metadata string // the dispatch metadata, as the control plane wrote it
	URL      string // LiveKit URL to join
	Token    string // participant token minted by livekit-server for this job
	Identity string // participant identity the token carries
	Offered  time.Time
	Assigned time.Time
}

// Handler runs one job. ctx is cancelled when LiveKit terminates the job (cause
// ErrJobTerminated) or the worker is stopped without draining (cause ErrWorkerStopped);
// the handler then leaves the room and returns. A nil error ends the job as a success.
type Handler func(ctx context.Context, job Job) error

// Config configures a Worker.
type Config struct {
	URL string // livekit-server URL, ws:// or wss:// (http(s) is accepted)
	// Token returns the registration token of one dial: a LiveKit access token with the
	// agent grant. livekit-server checks it when the worker registers, so it is asked
	// before every dial, a reconnection's too. A persona worker gets it from the
	// control plane (Refreshing over report.Client.AgentToken) and holds no LiveKit API
	// secret; SelfSigned is for tools and tests that run their own livekit-server.
	Token     func(ctx context.Context) (string, error)
	AgentName string
	Version   string
	// MaxJobs is how many jobs run at once; offers beyond it are declined and the worker
	// reports itself full.
	MaxJobs int
	// IdentityPrefix prefixes the job id to make the participant identity.
	IdentityPrefix string
	// ParticipantName is the display name the worker joins rooms with. Optional.
	ParticipantName func(metadata string) string
	// StatusInterval is how often load is reported besides on every change. Default 2.5s.
	StatusInterval time.Duration
	// PingInterval is how often the worker pings the server. Default 10s; a connection
	// silent for three intervals is dropped and dialled again.
	PingInterval time.Duration
	// CPULoad, when set, is the worker's measured CPU use, 0..1 of what it may use
	// (ProcessCPU). The load reported is then the larger of it and the share of job
	// slots taken, so that LiveKit, which picks among available workers at random
	// weighted by 1 - load, sends fewer jobs to a worker whose calls cost more than the
	// slots say (callers talking at once, video). Jobs are still refused only past
	// MaxJobs: the CPU's part is capped at 0.9, since LiveKit drops a job rather than
	// offer it to workers that all report 1.
	CPULoad func() float64
	// OnLoad, when set, is called with every load the worker reports (for metrics).
	OnLoad func(load float64, jobs int)
}

func (c *Config) defaults() error {
	if c.URL == "" || c.Token == nil {
		return errors.New("agent: URL and Token are required")
	}
	if c.AgentName == "" {
		return errors.New("agent: AgentName is required")
	}
	if c.MaxJobs <= 0 {
		c.MaxJobs = 1
	}
	if c.IdentityPrefix == "" {
		c.IdentityPrefix = "agent-"
	}
	if c.StatusInterval <= 0 {
		c.StatusInterval = 2500 * time.Millisecond
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 10 * time.Second
	}
	return nil
}

// Causes of a job context's cancellation (context.Cause).
var (
	ErrJobTerminated = errors.New("agent: job terminated by LiveKit")
	ErrWorkerStopped = errors.New("agent: worker stopped")
)

// offerTimeout bounds how long a slot stays reserved for an offer we accepted but whose
// assignment has not arrived (livekit-server gives up after 10 s).
const offerTimeout = 15 * time.Second

// Worker is one agent worker process's connection to LiveKit.
type Worker struct {
	cfg     Config
	handler Handler
	log     *slog.Logger

	mu         sync.Mutex
	conn       *websocket.Conn
	workerID   string
	draining   bool
	reserved   map[string]time.Time // job id -> when the offer was accepted
	running    map[string]context.CancelCauseFunc
	registered chan struct{} // closed on the first registration
	idle       chan struct{} // closed (and replaced) when draining and nothing runs

	wmu sync.Mutex // serialises websocket writes
	wg  sync.WaitGroup
}

// New returns a worker; Run connects it.
func New(cfg Config, h Handler, log *slog.Logger) (*Worker, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Worker{
		cfg:        cfg,
		handler:    h,
		log:        log.With("component", "agent"),
		reserved:   map[string]time.Time{},
		running:    map[string]context.CancelCauseFunc{},
		registered: make(chan struct{}),
		idle:       make(chan struct{}),
	}, nil
}

// Registered is closed once livekit-server has the worker in its dispatch tables (the
// first pong after the first registration).
func (w *Worker) Registered() <-chan struct{} { return w.registered }

// ID is the worker id livekit-server assigned at the latest registration.
func (w *Worker) ID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.workerID
}

// Jobs is the number of running jobs.
func (w *Worker) Jobs() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.running)
}

// Load is the share of capacity in use, 0..1: the job slots taken, counting offers
// accepted but not yet assigned, or the measured CPU (Config.CPULoad) when higher.
func (w *Worker) Load() float64 {
	w.mu.Lock()
	slots := w.slotsLocked()
	w.mu.Unlock()
	return w.withCPU(slots)
}

func (w *Worker) slotsLocked() float64 {
	l := float64(len(w.running)+len(w.reserved)) / float64(w.cfg.MaxJobs)
	return min(l, 1)
}

// maxCPULoad caps what the measured CPU adds to the load. LiveKit drops a job when every
// available worker reports load 1 (its weights, 1 - load, sum to nothing), so a busy CPU
// makes a worker less likely to be picked but never unpickable: only its slots make it
// full.
const maxCPULoad = 0.9

// withCPU is the load: the slots' share, or the measured CPU (at most maxCPULoad) when
// higher.
func (w *Worker) withCPU(slots float64) float64 {
	if w.cfg.CPULoad == nil {
		return slots
	}
	return max(slots, min(maxCPULoad, w.cfg.CPULoad()))
}

// Drain stops taking jobs: the worker reports itself full, declines every offer, and Run
// returns once the running jobs have ended.
func (w *Worker) Drain() {
	w.mu.Lock()
	if w.draining {
		w.mu.Unlock()
		return
	}
	w.draining = true
	w.checkIdleLocked()
	w.mu.Unlock()
	w.log.Info("draining", "jobs", w.Jobs())
	w.sendStatus()
}

func (w *Worker) checkIdleLocked() {
	if w.draining && len(w.running) == 0 && len(w.reserved) == 0 {
		select {
		case <-w.idle:
		default:
			close(w.idle)
		}
	}
}

// Run connects to livekit-server, registers and serves jobs until ctx is done or, after
// Drain, until the running jobs have ended. A dropped connection is dialled again with
// backoff; running jobs carry on meanwhile. When ctx ends, running jobs are cancelled and
// Run waits for their handlers to return.
func (w *Worker) Run(ctx context.Context) error {
	defer w.wg.Wait()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer w.cancelAll()

	backoff := 100 * time.Millisecond
	for {
		connected, err := w.session(runCtx)
		if w.isIdle() {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			backoff = 100 * time.Millisecond
		}
		w.log.Warn("agent connection lost; dialling again", "err", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-w.idle:
			return nil
		case <-ctx.Done():
			return nil
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (w *Worker) isIdle() bool {
	select {
	case <-w.idle:
		return true
	default:
		return false
	}
}

func (w *Worker) cancelAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.running {
		c(ErrWorkerStopped)
	}
}

// session runs one websocket connection: dial, register, serve. It reports whether the
// registration succeeded.
func (w *Worker) session(ctx context.Context) (bool, error) {
	conn, err := w.dial(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()

	reg := &livekit.RegisterWorkerRequest{
		Type:               livekit.JobType_JT_ROOM,
		AgentName:          w.cfg.AgentName,
		Version:            w.cfg.Version,
		PingInterval:       uint32(w.cfg.PingInterval / time.Second),
		AllowedPermissions: &livekit.ParticipantPermission{CanSubscribe: true, CanPublish: true, CanPublishData: true, CanUpdateMetadata: true},
	}
	if err := w.write(conn, &livekit.WorkerMessage{Message: &livekit.WorkerMessage_Register{Register: reg}}); err != nil {
		return false, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg, err := readServerMessage(conn)
	if err != nil {
		return false, fmt.Errorf("register: %w", err)
	}
	res := msg.GetRegister()
	if res == nil {
		return false, fmt.Errorf("register: unexpected %T", msg.Message)
	}

	w.mu.Lock()
	w.conn = conn
	w.workerID = res.WorkerId
	select {
	case <-w.registered:
		w.log.Info("registered again", "worker_id", res.WorkerId)
	default:
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.conn == conn {
			w.conn = nil
		}
		w.mu.Unlock()
	}()
	w.sendStatus()
	// livekit-server answers the registration before it adds the worker to its dispatch
	// tables; it answers pings only after. Registered() waits for this first pong.
	if err := w.write(conn, &livekit.WorkerMessage{Message: &livekit.WorkerMessage_Ping{Ping: &livekit.WorkerPing{Timestamp: time.Now().UnixMilli()}}}); err != nil {
		return true, err
	}

	// The reader runs on its own goroutine so that this one can tick status and pings and
	// notice ctx and drain completion.
	msgs := make(chan *livekit.ServerMessage)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			_ = conn.SetReadDeadline(time.Now().Add(3 * w.cfg.PingInterval))
			m, err := readServerMessage(conn)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case msgs <- m:
			case <-done:
				return
			}
		}
	}()

	status := time.NewTicker(w.cfg.StatusInterval)
	defer status.Stop()
	ping := time.NewTicker(w.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case m := <-msgs:
			w.handle(ctx, conn, m)
		case err := <-readErr:
			return true, err
		case <-status.C:
			w.expireOffers()
			w.sendStatus()
		case <-ping.C:
			_ = w.write(conn, &livekit.WorkerMessage{Message: &livekit.WorkerMessage_Ping{Ping: &livekit.WorkerPing{Timestamp: time.Now().UnixMilli()}}})
		case <-w.idle:
			_ = w.closeGracefully(conn)
			return true, nil
		case <-ctx.Done():
			_ = w.closeGracefully(conn)
			return true, ctx.Err()
		}
	}
}

func (w *Worker) dial(ctx context.Context) (*websocket.Conn, error) {
	token, err := w.cfg.Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent token: %w", err)
	}
	u, err := agentURL(w.cfg.URL)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (HTTP %d)", u, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", u, err)
	}
	return conn, nil
}

// agentURL turns the LiveKit URL into the agent websocket address.
func agentURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("agent: LiveKit URL: %w", err)
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("agent: LiveKit URL scheme %q", u.Scheme)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/agent"
	q := u.Query()
	q.Set("protocol", "1")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (w *Worker) closeGracefully(conn *websocket.Conn) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return conn.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}

func readServerMessage(conn *websocket.Conn) (*livekit.ServerMessage, error) {
	for {
		typ, data, err := conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		if typ != websocket.BinaryMessage {
			continue
		}
		m := &livekit.ServerMessage{}
		if err := proto.Unmarshal(data, m); err != nil {
			return nil, fmt.Errorf("decode server message: %w", err)
		}
		return m, nil
	}
}

func (w *Worker) write(conn *websocket.Conn, m *livekit.WorkerMessage) error {
	data, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return conn.WriteMessage(websocket.BinaryMessage, data)
}

// send writes on the current connection, if any. Messages for a connection that dropped
// are lost; LiveKit learns the truth from the next status and from the rooms.
func (w *Worker) send(m *livekit.WorkerMessage) {
	w.mu.Lock()
	conn := w.conn
	w.mu.Unlock()
	if conn == nil {
		return
	}
	if err := w.write(conn, m); err != nil {
		w.log.Debug("agent write failed", "err", err)
	}
}

func (w *Worker) sendStatus() {
	w.mu.Lock()
	slots := w.slotsLocked()
	jobs := len(w.running)
	st := livekit.WorkerStatus_WS_AVAILABLE
	if w.draining || len(w.running)+len(w.reserved) >= w.cfg.MaxJobs {
		st = livekit.WorkerStatus_WS_FULL
	}
	w.mu.Unlock()
	load := w.withCPU(slots)
	w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_UpdateWorker{UpdateWorker: &livekit.UpdateWorkerStatus{
		Status: &st, Load: float32(load), JobCount: uint32(jobs),
	}}})
	if w.cfg.OnLoad != nil {
		w.cfg.OnLoad(load, jobs)
	}
}

func (w *Worker) expireOffers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, at := range w.reserved {
		if time.Since(at) > offerTimeout {
			delete(w.reserved, id)
		}
	}
	w.checkIdleLocked()
}

func (w *Worker) handle(ctx context.Context, conn *websocket.Conn, m *livekit.ServerMessage) {
	switch msg := m.Message.(type) {
	case *livekit.ServerMessage_Availability:
		w.offer(conn, msg.Availability.GetJob())
	case *livekit.ServerMessage_Assignment:
		w.assign(ctx, msg.Assignment)
	case *livekit.ServerMessage_Termination:
		w.terminate(msg.Termination.GetJobId())
	case *livekit.ServerMessage_Pong:
		w.mu.Lock()
		select {
		case <-w.registered:
		default:
			close(w.registered)
			w.log.Info("registered", "worker_id", w.workerID, "agent_name", w.cfg.AgentName, "max_jobs", w.cfg.MaxJobs)
		}
		w.mu.Unlock()
	case *livekit.ServerMessage_Register:
	default:
		w.log.Debug("unhandled server message", "type", fmt.Sprintf("%T", m.Message))
	}
}

func (w *Worker) offer(conn *websocket.Conn, job *livekit.Job) {
	if job == nil {
		return
	}
	w.mu.Lock()
	ok := !w.draining && len(w.running)+len(w.reserved) < w.cfg.MaxJobs
	if ok {
		w.reserved[job.Id] = time.Now()
	}
	w.mu.Unlock()
	res := &livekit.AvailabilityResponse{JobId: job.Id, Available: ok}
	if ok {
		res.ParticipantIdentity = w.cfg.IdentityPrefix + job.Id
		if w.cfg.ParticipantName != nil {
			res.ParticipantName = w.cfg.ParticipantName(job.Metadata)
		}
	}
	w.log.Debug("job offered", "job_id", job.Id, "room", job.GetRoom().GetName(), "accepted", ok)
	_ = w.write(conn, &livekit.WorkerMessage{Message: &livekit.WorkerMessage_Availability{Availability: res}})
	if ok {
		w.sendStatus()
	}
}

func (w *Worker) assign(ctx context.Context, a *livekit.JobAssignment) {
	job := a.GetJob()
	if job == nil {
		return
	}
	w.mu.Lock()
	offered, ok := w.reserved[job.Id]
	delete(w.reserved, job.Id)
	if _, dup := w.running[job.Id]; dup {
		w.mu.Unlock()
		return
	}
	if !ok {
		offered = time.Now()
	}
	jobCtx, cancel := context.WithCancelCause(ctx)
	w.running[job.Id] = cancel
	w.mu.Unlock()

	j := Job{
		ID:       job.Id,
		Room:     job.GetRoom().GetName(),
		Metadata: job.Metadata,
		URL:      a.GetUrl(),
		Token:    a.Token,
		Identity: job.GetState().GetParticipantIdentity(),
		Offered:  offered,
		Assigned: time.Now(),
	}
	if j.URL == "" {
		// LiveKit OSS leaves the URL empty: join the server the worker registered with.
		j.URL = w.cfg.URL
	}
	if j.Identity == "" {
		j.Identity = w.cfg.IdentityPrefix + job.Id
	}
	w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_UpdateJob{UpdateJob: &livekit.UpdateJobStatus{
		JobId: job.Id, Status: livekit.JobStatus_JS_RUNNING,
	}}})
	w.sendStatus()

	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel(nil)
		err := w.runJob(jobCtx, j)
		update := &livekit.UpdateJobStatus{JobId: j.ID, Status: livekit.JobStatus_JS_SUCCESS}
		if err != nil {
			update.Status = livekit.JobStatus_JS_FAILED
			update.Error = err.Error()
			w.log.Warn("job failed", "job_id", j.ID, "room", j.Room, "err", err)
		}
		w.send(&livekit.WorkerMessage{Message: &livekit.WorkerMessage_UpdateJob{UpdateJob: update}})
		w.mu.Lock()
		delete(w.running, j.ID)
		w.checkIdleLocked()
		w.mu.Unlock()
		w.sendStatus()
	}()
}

// runJob runs the handler and turns a panic into a failed job: one bad call must not take
// the other calls on this worker down with it.
func (w *Worker) runJob(ctx context.Context, j Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job panicked: %v", r)
		}
	}()
	return w.handler(ctx, j)
}

func (w *Worker) terminate(jobID string) {
	w.mu.Lock()
	cancel := w.running[jobID]
	w.mu.Unlock()
	if cancel != nil {
		w.log.Info("job terminated by server", "job_id", jobID)
		cancel(ErrJobTerminated)
	}
}
