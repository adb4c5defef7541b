package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// BenchmarkAnswer measures, over repeated video calls, what a caller waits for after the
// call is answered (the room is created with the persona dispatch):
//
//   - dispatch-ms: room created to the persona worker joined the room
//   - connecting-ms: to the first connecting-screen frame decoded by the caller
//   - greeting-ms: to the first greeting audio heard by the caller
//   - worker-connecting-ms, worker-greeting-ms: the same two as the worker reports them
//     (first frame / first audio sent)
//
// and, as the floor, LiveKit's bare agent dispatch with a worker that only joins
// (bare-dispatch-ms). audio is the sim's audio call (the party joins with its tone,
// quiet once the assistant is in): greeting-ms, dispatch-ms and caller-joined-ms (the
// caller's connect call returned), on the livekit-server the stack runs (ICE lite) and,
// call for call in the same run, on one running livekit-server's default full ICE agent
// (full-ice-*: the baseline, whose joins wait a second on pion's peer-reflexive
// nomination timer whenever a client's first check beats its trickled candidate). Each
// value is the median over the iterations; p95 beside it.
//
//	go test -run '^$' -bench Answer -benchtime 40x ./mediafleet/worker
func BenchmarkAnswer(b *testing.B) {
	b.Run("bare-dispatch", benchBareDispatch)
	b.Run("persona", benchPersona)
	b.Run("audio", benchAudio)
}

type samples map[string][]float64

func (s samples) add(k string, d time.Duration) {
	s[k] = append(s[k], float64(d.Microseconds())/1000)
}

func (s samples) report(b *testing.B) {
	for k, v := range s {
		slices.Sort(v)
		b.ReportMetric(v[len(v)/2], k+"-ms")
		b.ReportMetric(v[min(len(v)-1, len(v)*95/100)], k+"-p95-ms")
	}
}

func benchBareDispatch(b *testing.B) {
	e := newEnv(b)
	joined := make(chan time.Time, 1)
	w, err := agent.New(agent.Config{
		URL: lk.URL, Token: agent.SelfSigned(lk.APIKey, lk.APISecret), AgentName: e.agentName, MaxJobs: 4,
	}, func(ctx context.Context, job agent.Job) error {
		gone := make(chan struct{})
		cb := lksdk.NewRoomCallback()
		cb.OnDisconnected = sync.OnceFunc(func() { close(gone) })
		room, err := lksdk.ConnectToRoomWithToken(job.URL, job.Token, cb, lksdk.WithAutoSubscribe(false))
		if err != nil {
			return err
		}
		joined <- time.Now()
		select {
		case <-ctx.Done():
		case <-gone:
		}
		room.Disconnect()
		return nil
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait(b, w.Registered(), "bare worker registration")

	s := samples{}
	// The first dispatch after a worker registers waits for livekit-server to refresh its
	// agent-name cache (about a second); warm it up outside the measurement.
	i := 0
	for warm := true; warm || b.Loop(); warm = false {
		i++
		room := fmt.Sprintf("bare-%d", i)
		created := time.Now()
		if _, err := e.rooms.CreateRoom(context.Background(), &livekit.CreateRoomRequest{
			Name: room, Agents: []*livekit.RoomAgentDispatch{{AgentName: e.agentName, Metadata: "{}"}},
		}); err != nil {
			b.Fatal(err)
		}
		if at := wait(b, joined, "bare worker join"); !warm {
			s.add("bare-dispatch", at.Sub(created))
		}
		if _, err := e.rooms.DeleteRoom(context.Background(), &livekit.DeleteRoomRequest{Room: room}); err != nil {
			b.Fatal(err)
		}
	}
	s.report(b)
}

func benchPersona(b *testing.B) {
	e := newEnv(b)
	joined := make(chan time.Time, 1)
	e.startWorkerWith(nil, workerOptionsJoined(joined))

	s := samples{}
	i := 0
	for warm := true; warm || b.Loop(); warm = false { // one warm-up call, as above
		i++
		job := testJob(fmt.Sprintf("call_bench_%d", i), "video", "ava_maya")
		sc := newScreens(job.Brand.Color, job.Version.AvatarID)
		job.AnsweredAt = time.Now().UTC()
		token := e.call("room-"+job.CallID, job)
		tone := callerbot.Tone(200)
		bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: e.lk.URL, Token: token, Audio: &tone, OnFrame: sc.see})
		if err != nil {
			b.Fatal(err)
		}
		joinedAt := wait(b, joined, "persona worker join")
		eventually(b, 15*time.Second, "greeting audio", func() bool { return !bot.FirstSound().IsZero() })
		sc.mu.Lock()
		first := sc.firstConnecting
		sc.mu.Unlock()
		bot.Leave()
		reps := e.reportsUntilEnded(job.CallID, 20*time.Second)
		if warm {
			continue
		}
		s.add("dispatch", joinedAt.Sub(job.AnsweredAt))
		s.add("greeting", bot.FirstSound().Sub(job.AnsweredAt))
		if !first.IsZero() {
			s.add("connecting", first.Sub(job.AnsweredAt))
		}
		m := reps[len(reps)-1].Metrics
		if m.ConnectingScreenMS != nil && m.FirstGreetingMS != nil {
			s.add("worker-connecting", time.Duration(*m.ConnectingScreenMS)*time.Millisecond)
			s.add("worker-greeting", time.Duration(*m.FirstGreetingMS)*time.Millisecond)
		}
	}
	s.report(b)
}

func workerOptionsJoined(joined chan<- time.Time) worker.Options {
	return worker.Options{OnJoined: func(_ persona.Job, at time.Time) { joined <- at }}
}

func benchAudio(b *testing.B) {
	type target struct {
		prefix string
		e      *env
		joined chan time.Time
	}
	baseline := livekittest.Start(b, livekitserver.Config{FullICE: true})
	var targets []*target
	for _, t := range []struct {
		prefix string
		srv    lkServer
	}{{"", lk}, {"full-ice-", serverOf(baseline)}} {
		tg := &target{prefix: t.prefix, e: newEnvOn(b, t.srv), joined: make(chan time.Time, 1)}
		tg.e.startWorkerWith(nil, workerOptionsJoined(tg.joined))
		targets = append(targets, tg)
	}
	s := samples{}
	i := 0
	for warm := true; warm || b.Loop(); warm = false { // one warm-up call each, as above
		i++
		for k := range targets {
			tg := targets[(i+k)%len(targets)] // alternate which server goes first
			job := testJob(fmt.Sprintf("call_audio_%d_%d", i, k), "audio", "ava_maya")
			job.AnsweredAt = time.Now().UTC()
			token := tg.e.call("room-"+job.CallID, job)
			tone := callerbot.Tone(440)
			bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: tg.e.lk.URL, Token: token, Audio: &tone, QuietForAgents: true})
			if err != nil {
				b.Fatal(err)
			}
			inRoom := time.Now()
			joinedAt := wait(b, tg.joined, "persona worker join")
			eventually(b, 15*time.Second, "greeting audio", func() bool { return !bot.FirstSound().IsZero() })
			bot.Leave()
			tg.e.reportsUntilEnded(job.CallID, 20*time.Second)
			if warm {
				continue
			}
			s.add(tg.prefix+"greeting", bot.FirstSound().Sub(job.AnsweredAt))
			s.add(tg.prefix+"dispatch", joinedAt.Sub(job.AnsweredAt))
			s.add(tg.prefix+"caller-joined", inRoom.Sub(job.AnsweredAt))
		}
	}
	s.report(b)
}
