package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	protoLogger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
)

const agentName = "test-agent"

func TestMain(m *testing.M) {
	lksdk.SetLogger(protoLogger.GetDiscardLogger())
	os.Exit(m.Run())
}

type started struct {
	job  agent.Job
	room *lksdk.Room
}

// joiningHandler joins the room like a real persona worker and stays until the job is
// terminated or the room goes away (on DeleteRoom livekit-server closes the agent's
// connection first and sends a JobTermination only once the agent has left, if at all:
// pkg/rtc/room.go, v1.8.4 and v1.11.0 alike).
func joiningHandler(t *testing.T, jobs chan<- started, ended chan<- string) agent.Handler {
	return func(ctx context.Context, job agent.Job) error {
		gone := make(chan struct{})
		cb := lksdk.NewRoomCallback()
		cb.OnDisconnected = sync.OnceFunc(func() { close(gone) })
		room, err := lksdk.ConnectToRoomWithToken(job.URL, job.Token, cb, lksdk.WithAutoSubscribe(false))
		if err != nil {
			return fmt.Errorf("join: %w", err)
		}
		jobs <- started{job, room}
		select {
		case <-ctx.Done():
		case <-gone:
		}
		room.Disconnect()
		ended <- job.ID
		return nil
	}
}

func newWorker(t *testing.T, lk *livekitserver.Server, maxJobs int, h agent.Handler) *agent.Worker {
	t.Helper()
	w, err := agent.New(agent.Config{
		URL: lk.WSURL(), Token: agent.SelfSigned(lk.Config().APIKey, lk.Config().APISecret),
		AgentName: agentName, MaxJobs: maxJobs, StatusInterval: 200 * time.Millisecond,
	}, h, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func createRoom(t *testing.T, rooms *lksdk.RoomServiceClient, name, metadata string) {
	t.Helper()
	_, err := rooms.CreateRoom(context.Background(), &livekit.CreateRoomRequest{
		Name:   name,
		Agents: []*livekit.RoomAgentDispatch{{AgentName: agentName, Metadata: metadata}},
	})
	if err != nil {
		t.Fatalf("CreateRoom(%s): %v", name, err)
	}
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestDispatchTerminateAndDrain(t *testing.T) {
	lk := livekittest.Start(t, livekitserver.Config{})
	rooms := lksdk.NewRoomServiceClient(lk.HTTPURL(), lk.Config().APIKey, lk.Config().APISecret)

	jobs := make(chan started, 4)
	ended := make(chan string, 4)
	w := newWorker(t, lk, 1, joiningHandler(t, jobs, ended))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(ctx) }()
	waitFor(t, w.Registered(), "registration")

	createRoom(t, rooms, "room-a", `{"call_id":"call_a"}`)
	a := waitFor(t, jobs, "job for room-a")
	if a.job.Room != "room-a" || a.job.Metadata != `{"call_id":"call_a"}` {
		t.Errorf("job = room %q metadata %q, want room-a with its metadata", a.job.Room, a.job.Metadata)
	}
	if got := w.Load(); got != 1 {
		t.Errorf("Load() with one job of one = %v, want 1", got)
	}

	// Full: LiveKit must not hand this worker a second job.
	createRoom(t, rooms, "room-b", `{}`)
	select {
	case s := <-jobs:
		t.Errorf("full worker got a job for %s", s.job.Room)
	case <-time.After(1500 * time.Millisecond):
	}

	// Deleting the room terminates the job.
	if _, err := rooms.DeleteRoom(context.Background(), &livekit.DeleteRoomRequest{Room: "room-a"}); err != nil {
		t.Fatal(err)
	}
	if id := waitFor(t, ended, "job end after room deletion"); id != a.job.ID {
		t.Errorf("ended job %s, want %s", id, a.job.ID)
	}

	// Draining with nothing running returns at once and declines new jobs.
	deadline := time.Now().Add(5 * time.Second)
	for w.Jobs() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	w.Drain()
	waitFor(t, runDone, "Run to return after drain")
}

func TestDrainWaitsForRunningJobs(t *testing.T) {
	lk := livekittest.Start(t, livekitserver.Config{})
	rooms := lksdk.NewRoomServiceClient(lk.HTTPURL(), lk.Config().APIKey, lk.Config().APISecret)

	jobs := make(chan started, 4)
	ended := make(chan string, 4)
	w := newWorker(t, lk, 2, joiningHandler(t, jobs, ended))
	runDone := make(chan error, 1)
	go func() { runDone <- w.Run(context.Background()) }()
	waitFor(t, w.Registered(), "registration")

	createRoom(t, rooms, "room-1", `{}`)
	waitFor(t, jobs, "job")
	w.Drain()

	createRoom(t, rooms, "room-2", `{}`)
	select {
	case s := <-jobs:
		t.Errorf("draining worker got a job for %s", s.job.Room)
	case <-time.After(1500 * time.Millisecond):
	}
	select {
	case <-runDone:
		t.Fatal("Run returned while a job was running")
	default:
	}

	if _, err := rooms.DeleteRoom(context.Background(), &livekit.DeleteRoomRequest{Room: "room-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ended, "job end")
	waitFor(t, runDone, "Run to return once the job ended")
}
