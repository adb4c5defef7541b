package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// BenchmarkWorkerConversations holds BENCH_CALLS (default 10) conversations on one
// worker at once, as callers hold them: the callers arrive BENCH_STAGGER apart (default
// 2 s), and each hears its greeting, asks its question (about 6 s of flite speech),
// listens to the whole reply (about 12 s), pauses a second and asks again, BENCH_TURNS
// times (default 3), so that at any moment some speak and others listen. BenchmarkWorkerCPU measures each
// phase with every caller in it at once; this is the mix a worker serves. The worker
// runs in its own process as there (BENCH_WORKER_CPU=n pins it to CPU n), recognising
// with the streaming hosted recogniser (deepgramtest's fake, 150 ms from Finalize to
// the final text: the response's floor is the 400 ms end of turn plus those 150 ms),
// or with BENCH_STT=pocketsphinx with pocketsphinx on the worker's CPU, the offline
// default (one decoder per call; its floor is the 400 ms end of turn plus the end of
// the search, about 15 ms).
// It prints the response (end of the caller's question to the reply heard) p50 and p95
// and the worker's CPU from the first caller's arrival to the last reply, as a share of one core and per call, beside the
// same conversation alone (one call) in the same run: the baseline.
//
//	BENCH_WORKER_CPU=1 taskset -c 0 go test -run '^$' -bench WorkerConversations -benchtime 1x -timeout 30m ./mediafleet/worker
//	BENCH_STT=pocketsphinx BENCH_CALLS=5 BENCH_WORKER_CPU=1 taskset -c 0 go test -run '^$' -bench 'WorkerConversations/audio' ...
func BenchmarkWorkerConversations(b *testing.B) {
	k, turns := benchCount(b, "BENCH_CALLS", 10), benchCount(b, "BENCH_TURNS", 3)
	stagger := 2 * time.Second
	if v := os.Getenv("BENCH_STAGGER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			b.Fatalf("BENCH_STAGGER %q: want a duration", v)
		}
		stagger = d
	}
	question, fake, env := workerBenchParts(b)
	recogniser, floor := "deepgram", 550*time.Millisecond
	switch v := os.Getenv("BENCH_STT"); v {
	case "", "deepgram":
	case "pocketsphinx":
		recogniser, floor, env = v, 415*time.Millisecond, nil
	default:
		b.Fatalf("BENCH_STT %q: want deepgram or pocketsphinx", v)
	}
	for _, media := range []string{"audio", "video"} {
		for _, n := range []int{1, k} {
			b.Run(fmt.Sprintf("%s-%s-%d", media, recogniser, n), func(b *testing.B) {
				for b.Loop() {
					conversationsRun(b, fake, question, media+"-"+recogniser, floor, n, turns, stagger, env)
				}
			})
		}
	}
}

func benchCount(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s %q: want a count", name, v)
	}
	return n
}

// conversationsRun holds k conversations; name is the media and the recogniser
// ("audio-deepgram"), media its first word, floor the response's floor.
func conversationsRun(b *testing.B, fake *llmtest.Server, question tts.PCM, name string, floor time.Duration, k, turns int, stagger time.Duration, extra []string) {
	media, _, _ := strings.Cut(name, "-")
	e := newEnv(b)
	cmd := startWorkerProcess(b, e, fake, k, extra, "")
	pid := cmd.Process.Pid
	load := []string{loadAverage()}
	time.Sleep(time.Second)
	idleFrom := sampleProc(b, pid)
	time.Sleep(5 * time.Second)
	idle := share(idleFrom, sampleProc(b, pid))

	var mu sync.Mutex
	var responses []time.Duration
	// The duty cycle: how long the callers spoke, and how long they were in their calls
	// (from joining to the end of their last reply).
	var spoke, lived time.Duration
	var problems []string
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	bots := make([]*callerbot.Bot, k)
	jobs := make([]string, k)
	defer func() {
		leaveAll(bots)
		if slices.Contains(jobs, "") {
			return // a call never placed has no ended report to wait for
		}
		waitEnded(b, e, jobs, 30*time.Second)
	}()
	from, waitedFrom := sampleProc(b, pid), runDelay(pid)
	var wg sync.WaitGroup
	for i := range bots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * stagger)
			joined := time.Now()
			bot, job, err := joinCaller(e, media)
			if err != nil {
				note("caller %d: join: %v", i, err)
				return
			}
			mu.Lock()
			bots[i], jobs[i] = bot, job
			mu.Unlock()
			defer func() {
				mu.Lock()
				lived += time.Since(joined)
				mu.Unlock()
			}()
			if _, ok := soundAfter(bot, time.Time{}, 30*time.Second); !ok {
				note("caller %d: no greeting within 30 s", i)
				return
			}
			if !quietFor(bot, time.Second, 60*time.Second) {
				note("caller %d: the greeting did not end within 60 s", i)
				return
			}
			for turn := range turns {
				n, err := bot.Say(cpuQuestion, question)
				if err != nil {
					note("caller %d turn %d: %v", i, turn, err)
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				u, err := bot.WaitSaid(ctx, n)
				cancel()
				if err != nil {
					note("caller %d turn %d: the question was not said: %v", i, turn, err)
					return
				}
				mu.Lock()
				spoke += u.End.Sub(u.Start)
				mu.Unlock()
				reply, ok := soundAfter(bot, u.End, 15*time.Second)
				if !ok {
					note("caller %d turn %d: no reply within 15 s", i, turn)
					continue
				}
				mu.Lock()
				responses = append(responses, reply.Start.Sub(u.End))
				mu.Unlock()
				if !quietFor(bot, time.Second, 60*time.Second) {
					note("caller %d turn %d: the reply did not end within 60 s", i, turn)
					return
				}
			}
		}()
	}
	wg.Wait()
	to, waited := sampleProc(b, pid), runDelay(pid)-waitedFrom
	load = append(load, loadAverage())

	cores := share(from, to)
	perCall := (cores - idle) / float64(k) * 1000
	slices.Sort(responses)
	var p50, p95 float64
	if len(responses) > 0 {
		p50 = float64(percentileOf(responses, 50).Milliseconds())
		p95 = float64(percentileOf(responses, 95).Milliseconds())
	}
	fmt.Printf("worker-conversations %s: %d conversations, %d turns each, callers %v apart; response p50 %.0f ms p95 %.0f ms (n=%d of %d; floor %d ms); the worker from the first arrival to the last reply: %.2f of a core, %.1f ms CPU per call-second beyond the idle worker's %.1f (%.1f calls per core at that cost); callers spoke %.0f%% of their calls' time; the worker's threads waited %.0f ms per second for a CPU; load average %s, then %s\n",
		name, k, turns, stagger, p50, p95, len(responses), k*turns, floor.Milliseconds(), cores, perCall, idle*1000, 1000/perCall, 100*spoke.Seconds()/lived.Seconds(), float64(waited.Milliseconds())/to.at.Sub(from.at).Seconds(), load[0], load[1])
	b.ReportMetric(p50, "response-ms")
	b.ReportMetric(p95, "response-p95-ms")
	b.ReportMetric(cores, "worker-cores")
	b.ReportMetric(perCall, "cpu-ms/call-s")
	for _, p := range problems {
		b.Error(p)
	}
}

// runDelay is how long the process's threads have waited on a run queue for a CPU
// (/proc/<pid>/task/*/schedstat, the second field): on a core shared with other work
// it tells a busy core from a slow worker. 0 where the kernel keeps no schedstat.
func runDelay(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread has exited
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			ns, _ := strconv.ParseInt(f[1], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// soundAfter waits up to within for the first sound the bot hears after t.
func soundAfter(bot *callerbot.Bot, t time.Time, within time.Duration) (callerbot.Sound, bool) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, ok := bot.SoundAfter("", t); ok {
			return s, true
		}
	}
	return callerbot.Sound{}, false
}

// quietFor waits up to within until the bot has heard nothing for quiet.
func quietFor(bot *callerbot.Bot, quiet, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if heardNothingFor(bot, quiet) {
			return true
		}
	}
	return false
}
