package worker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Two workers of one call each: LiveKit must hand the second call to the second worker.
func TestTwoWorkersShareCalls(t *testing.T) {
	e := newEnv(t)
	one := func(c *worker.Config) { c.MaxJobs = 1 }
	a, b := e.startWorker(one), e.startWorker(one)

	var bots []*callerbot.Bot
	for _, id := range []string{"call_share_1", "call_share_2"} {
		job := testJob(id, "audio", "ava_theo")
		token := e.call("room-"+id, job)
		tone := callerbot.Tone(250)
		bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token, Audio: &tone})
		if err != nil {
			t.Fatal(err)
		}
		defer bot.Leave()
		bots = append(bots, bot)
		if r := e.nextReport(id, 15*time.Second); r.Kind != persona.ReportMediaVerified {
			t.Fatalf("%s: first report %s, want media_verified", id, r.Kind)
		}
	}
	if a.Calls() != 1 || b.Calls() != 1 {
		t.Errorf("calls per worker = %d and %d, want 1 and 1", a.Calls(), b.Calls())
	}
	for i, bot := range bots {
		bot.Leave()
		id := []string{"call_share_1", "call_share_2"}[i]
		reps := e.reportsUntilEnded(id, 20*time.Second)
		if end := reps[len(reps)-1]; end.EndReason != "caller_hangup" {
			t.Errorf("%s ended with %q, want caller_hangup", id, end.EndReason)
		}
	}
}

// workerProcess is cmd/persona-worker running as a real process.
type workerProcess struct {
	cmd    *exec.Cmd
	exited chan error
	mu     sync.Mutex
	lines  []map[string]any
	seen   chan struct{} // pinged on every log line
}

var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "persona-worker")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "persona-worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/bridgeline/bridgeline/cmd/persona-worker").CombinedOutput()
	if err != nil {
		return "", &buildError{string(out)}
	}
	return bin, nil
})

type buildError struct{ out string }

func (b *buildError) Error() string { return "go build: " + b.out }

func (e *env) startProcess(extraEnv ...string) *workerProcess {
	e.t.Helper()
	bin, err := buildOnce()
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := e.config(nil)
	cmd := exec.Command(bin)
	// The worker process gets no LiveKit key or secret, as on the fleet: its
	// registration token comes from the control plane (checked once it registered).
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "LIVEKIT_API_") })
	cmd.Env = append(cmd.Env,
		"LIVEKIT_URL="+cfg.LiveKitURL,
		"BRIDGELINE_API_URL="+cfg.ControlPlane, "PERSONA_REPORT_SECRET="+cfg.ReportSecret, "PERSONA_AGENT_NAME="+cfg.AgentName, "PERSONA_MAX_JOBS=2", "PERSONA_LOG_LEVEL=debug")
	cmd.Env = append(cmd.Env, extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	before := e.tokens.Load()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &workerProcess{cmd: cmd, exited: make(chan error, 1), seen: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.mu.Lock()
				p.lines = append(p.lines, m)
				p.mu.Unlock()
				select {
				case p.seen <- struct{}{}:
				default:
				}
			}
		}
		p.exited <- cmd.Wait()
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if e.t.Failed() {
			p.mu.Lock()
			for _, l := range p.lines {
				e.t.Logf("worker: %v", l)
			}
			p.mu.Unlock()
		}
	})
	p.waitLog(e.t, "registered")
	if e.tokens.Load() == before {
		e.t.Fatal("the worker process registered without asking the control plane for its token")
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "LIVEKIT_API_SECRET=") {
			e.t.Fatalf("the worker process's environment holds %s", kv)
		}
	}
	return p
}

// waitLog waits for a log line whose msg is msg.
func (p *workerProcess) waitLog(t testing.TB, msg string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if l["msg"] == msg {
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case <-p.seen:
		case err := <-p.exited:
			t.Fatalf("worker exited (%v) before logging %q", err, msg)
		case <-deadline:
			t.Fatalf("worker did not log %q", msg)
		}
	}
}

func TestSIGTERMDrainsCalls(t *testing.T) {
	e := newEnv(t)
	p := e.startProcess()

	job := testJob("call_drain", "video", "ava_maya")
	token := e.call("room-drain", job)
	// A quiet caller: the process worker listens (Silero VAD), and a steady tone may
	// score as speech and hold the greeting paused as a barge-in would.
	quiet := callerbot.Silence()
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token, Audio: &quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	for r := e.nextReport(job.CallID, 15*time.Second); r.Kind != persona.ReportGreeting; r = e.nextReport(job.CallID, 15*time.Second) {
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "draining")

	// A call placed while draining is not taken, and the running one carries on.
	late := testJob("call_late", "audio", "ava_maya")
	e.call("room-late", late)
	select {
	case err := <-p.exited:
		t.Fatalf("worker exited (%v) with a call running", err)
	case r := <-e.reports:
		t.Fatalf("report %s %s while draining, want none", r.CallID, r.Kind)
	case <-time.After(1500 * time.Millisecond):
	}
	parts, err := e.rooms.ListParticipants(context.Background(), &livekit.ListParticipantsRequest{Room: "room-late"})
	if err == nil && len(parts.Participants) != 0 {
		t.Errorf("room-late has %d participants, want no assistant dispatched to a draining worker", len(parts.Participants))
	}

	bot.Leave()
	reps := e.reportsUntilEnded(job.CallID, 20*time.Second)
	if end := reps[len(reps)-1]; end.EndReason != "caller_hangup" {
		t.Errorf("drained call ended with %q, want caller_hangup", end.EndReason)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("worker exit = %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("worker did not exit after its last call ended")
	}
}

func TestDrainTimeoutEndsCalls(t *testing.T) {
	e := newEnv(t)
	p := e.startProcess("PERSONA_DRAIN_TIMEOUT=1s")

	job := testJob("call_cut", "audio", "ava_iris")
	token := e.call("room-cut", job)
	// A quiet caller: the process worker listens (Silero VAD), and a steady tone may
	// score as speech and hold the greeting paused as a barge-in would.
	quiet := callerbot.Silence()
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token, Audio: &quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	if r := e.nextReport(job.CallID, 15*time.Second); r.Kind != persona.ReportMediaVerified {
		t.Fatalf("first report %s, want media_verified", r.Kind)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	reps := e.reportsUntilEnded(job.CallID, 20*time.Second)
	if end := reps[len(reps)-1]; end.EndReason != "worker_shutdown" {
		t.Errorf("call ended with %q, want worker_shutdown", end.EndReason)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("worker exit = %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("worker did not exit after the drain timeout")
	}
	left := wait(t, bot.RemoteLeft(), "the assistant leaving")
	if !strings.HasPrefix(left, "assistant-") {
		t.Errorf("participant that left = %s, want the assistant", left)
	}
}
