package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// workerChildEnv set makes the test binary run a persona worker, configured from the
// environment as cmd/persona-worker is, instead of the tests: BenchmarkWorkerCPU's worker
// process. With workerProfileEnv naming a file, the child writes a CPU profile of its
// life there.
const (
	workerChildEnv   = "BENCH_WORKER_CHILD"
	workerProfileEnv = "BENCH_WORKER_PROFILE"
	workerCPUEnv     = "BENCH_WORKER_CPU"
)

// workerChild is cmd/persona-worker's main without the drain: SIGTERM ends the calls.
func workerChild() int {
	cfg, err := worker.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker child: config:", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	worker.SetSDKLogger(log)
	eng, err := engines.FromEnv(os.Getenv, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker child: speech engines:", err)
		return 2
	}
	defer eng.Close()
	w, err := worker.New(cfg, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), CPULoad: agent.ProcessCPU()}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker child:", err)
		return 2
	}
	if path := os.Getenv(workerProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker child: profile:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "worker child: profile:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker child:", err)
		return 1
	}
	return 0
}

// cpuReply is the fake model's answer: long enough (16.5 s of flite speech, three
// sentences) that the caller is still listening when the 4 s window closes.
const cpuReply = "Thank you for asking. We open at nine in the morning every day of the week, " +
	"and we close at six in the evening, except on Sundays when we close at noon. " +
	"If you need a plumber outside those hours, our emergency line is open all night, " +
	"and someone will call you back within the hour."

// cpuQuestion is what each caller says: one long sentence, about 5 s with flite.
const cpuQuestion = "Hello, I would like to know at what time your office opens in the morning " +
	"and whether somebody could come round to look at a leaking pipe under my kitchen sink"

// BenchmarkWorkerCPU measures what calls cost the persona worker alone: the worker runs
// in its own process (this test binary started again, configured from the environment as
// cmd/persona-worker is, with the real engines: Silero VAD, pocketsphinx with one decoder
// per call, flite, VP8; the model is llmtest's fake), and its CPU is read from
// /proc/<pid>/stat (utime+stime) over each phase, so the callers (callerbot, in this
// process) and livekit-server (its own process) are not counted. That makes it CPU
// seconds per call second, mostly independent of what else the machine runs.
//
// Each sub-benchmark starts a worker and measures, in order: the idle worker (the
// baseline: registered, no call), then BENCH_CALLS (default 4) concurrent calls of one
// media with both sides silent after the greeting, then two turns each: while every
// caller speaks (5 s of flite speech: VAD and recognition), and while every caller
// listens (the reply: synthesis, Opus and, on video, the avatar's mouth), 4 s from the
// last caller hearing its reply begin, and the whole reply: from the end of the callers'
// speech to the end of the last reply, the CPU sampled every 50 ms. The 4 s window
// depends on when the replies start: the reply's later sentences are synthesised as
// soon as its first is queued, so when the replies start together (a fast recogniser)
// every call's synthesis falls in the window, and when they are spread (pocketsphinx,
// turns decoded at different speeds) the earlier calls' falls before it; the whole
// reply counts all of it every time. audio-deepgram and video-deepgram are the calls
// recognised by the streaming hosted recogniser (deepgramtest's fake, 150 ms to the
// final text) instead of pocketsphinx on the worker's CPU; audio-vad-ungated is the audio call with Silero run on every window
// (PERSONA_VAD_GATE_DBFS=off), the baseline of the VAD's level gate. Per call it
// prints the worker's CPU beyond the idle baseline as a share of one core (ms of CPU per
// second of call), the calls a core holds at that cost, and resident memory per call;
// also the response time at the caller (end of its speech to the reply heard) and the
// load average. video-every-frame is the video call with the avatar drawn and encoded
// at the full frame rate even while nothing on it changes (PERSONA_VIDEO_IDLE_FPS=15):
// the baseline of the still-frame skip, in the same run.
//
//	go test -run '^$' -bench WorkerCPU -benchtime 1x -timeout 30m ./mediafleet/worker
//
// BENCH_WORKER_PROFILE=dir writes each worker's CPU profile to dir/<media>.pprof.
// BENCH_WORKER_CPU=n pins the worker's threads to CPU n; with the test on the other CPUs
// it shows the response at a core's worth of calls:
//
//	BENCH_CALLS=10 BENCH_WORKER_CPU=1 taskset -c 0 go test -run '^$' -bench 'WorkerCPU/audio-deepgram$' -benchtime 1x -timeout 30m ./mediafleet/worker
func BenchmarkWorkerCPU(b *testing.B) {
	k := benchCount(b, "BENCH_CALLS", 4)
	question, fake, deepgram := workerBenchParts(b)
	for _, c := range []struct {
		name, media string
		env         []string
	}{
		{"audio", "audio", nil},
		{"audio-deepgram", "audio", deepgram},
		{"audio-vad-ungated", "audio", []string{"PERSONA_VAD_GATE_DBFS=off"}},
		{"video", "video", nil},
		{"video-deepgram", "video", deepgram},
		{"video-every-frame", "video", []string{"PERSONA_VIDEO_IDLE_FPS=15"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cpuRun(b, fake, question, c.name, c.media, k, c.env)
			}
		})
	}
}

// workerBenchParts is what the worker benchmarks' calls share: the callers' question
// (flite), the fake model answering cpuReply, and the environment that has a worker
// recognise with the streaming hosted recogniser's fake (Deepgram's live protocol on a
// loopback socket, 150 ms from Finalize to the final text): the recognition then runs
// outside the worker, as in production with STT_PROVIDER=deepgram.
func workerBenchParts(b *testing.B) (question tts.PCM, fake *llmtest.Server, deepgram []string) {
	b.Helper()
	question, err := callerbot.Flite(context.Background(), "slt", cpuQuestion)
	if err != nil {
		b.Skipf("flite: %v", err)
	}
	fake = llmtest.New(llmtest.Reply{Text: cpuReply})
	b.Cleanup(fake.Close)
	dg := deepgramtest.New(deepgramtest.Config{Key: "bench-key", FinalizeDelay: 150 * time.Millisecond,
		InterimEvery: 250 * time.Millisecond, Words: func([]int16, bool) string { return cpuQuestion }})
	b.Cleanup(dg.Close)
	return question, fake, []string{"STT_PROVIDER=deepgram", "DEEPGRAM_API_KEY=bench-key", "DEEPGRAM_BASE_URL=" + dg.URL()}
}

// procSample is a process's CPU time so far and its resident memory.
type procSample struct {
	at    time.Time
	cpu   time.Duration // utime + stime
	rssKB int64
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTick = 10 * time.Millisecond

func sampleProc(b testing.TB, pid int) procSample {
	b.Helper()
	now := time.Now()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces; the fields after its ')' are fixed.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	s := procSample{at: now, cpu: time.Duration(utime+stime) * clockTick}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			s.rssKB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return s
}

// share is the CPU used between two samples as a share of one core.
func share(from, to procSample) float64 {
	return float64(to.cpu-from.cpu) / float64(to.at.Sub(from.at))
}

// startWorkerProcess starts the worker child for e and waits until it is registered.
func startWorkerProcess(b *testing.B, e *env, fake *llmtest.Server, maxJobs int, extra []string, profile string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(),
		workerChildEnv+"=1",
		"LIVEKIT_URL="+e.lk.URL,
		"BRIDGELINE_API_URL="+e.api.URL, "PERSONA_REPORT_SECRET="+testReportSecret,
		"PERSONA_AGENT_NAME="+e.agentName, "PERSONA_MAX_JOBS="+strconv.Itoa(maxJobs),
		"PERSONA_STT_DECODERS="+strconv.Itoa(maxJobs),
		"LLM_BASE_URL="+fake.URL(), "LLM_MODEL=bench-model", "LLM_API_KEY=bench",
	)
	cmd.Env = append(cmd.Env, extra...)
	if profile != "" {
		cmd.Env = append(cmd.Env, workerProfileEnv+"="+profile)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	registered := make(chan struct{})
	var tail []string
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		once := sync.OnceFunc(func() { close(registered) })
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, `"msg":"registered"`) {
				once()
			}
			if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) || !strings.HasPrefix(line, "{") {
				mu.Lock()
				tail = append(tail, line)
				mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	// pin puts every thread of the worker on BENCH_WORKER_CPU (run the test itself under
	// taskset on the others, so callers and livekit-server stay off it); again once it
	// has registered, for any thread made meanwhile by one not yet pinned.
	pin := func() {
		if cpu := os.Getenv(workerCPUEnv); cpu != "" {
			if out, err := exec.Command("taskset", "-a", "-p", "-c", cpu, strconv.Itoa(cmd.Process.Pid)).CombinedOutput(); err != nil {
				_ = cmd.Process.Kill()
				b.Fatalf("taskset: %v\n%s", err, out)
			}
		}
	}
	pin()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		mu.Lock()
		defer mu.Unlock()
		if len(tail) > 0 && b.Failed() {
			b.Logf("worker process log (warnings and errors):\n%s", strings.Join(tail, "\n"))
		}
	})
	select {
	case <-registered:
	case err := <-exited:
		b.Fatalf("worker process exited before registering: %v\n%s", err, strings.Join(tail, "\n"))
	case <-time.After(60 * time.Second):
		b.Fatal("worker process did not register within 60 s")
	}
	pin()
	return cmd
}

func cpuRun(b *testing.B, fake *llmtest.Server, question tts.PCM, name, media string, k int, extra []string) {
	e := newEnv(b)
	profile := ""
	if dir := os.Getenv(workerProfileEnv); dir != "" {
		profile = fmt.Sprintf("%s/%s.pprof", dir, name)
	}
	cmd := startWorkerProcess(b, e, fake, k, extra, profile)
	pid := cmd.Process.Pid
	load := []string{loadAverage()}

	// The idle worker: registered, its engines loaded, no call. The baseline.
	time.Sleep(time.Second)
	idleFrom := sampleProc(b, pid)
	time.Sleep(5 * time.Second)
	idleTo := sampleProc(b, pid)
	idle := share(idleFrom, idleTo)

	bots, hangUp := joinCallers(b, e, k, media)
	defer hangUp()

	// Silent: both sides quiet (the avatar only blinks).
	time.Sleep(time.Second)
	silentFrom := sampleProc(b, pid)
	time.Sleep(5 * time.Second)
	silentTo := sampleProc(b, pid)
	peakRSS := silentTo.rssKB

	var speaking, listening, replying []float64
	var responses []time.Duration
	missed := 0
	for turn := range 2 {
		// Speaking: every caller says its question at once.
		idx := make([]int, k)
		for i, bot := range bots {
			n, err := bot.Say(cpuQuestion, question)
			if err != nil {
				b.Fatal(err)
			}
			idx[i] = n
		}
		var said []callerbot.Utterance
		var from procSample
		for i, bot := range bots {
			eventually(b, 10*time.Second, "the caller's speech to start", func() bool { return !bot.Said()[idx[i]].Start.IsZero() })
			if i == k-1 {
				from = sampleProc(b, pid)
			}
		}
		var to procSample
		for i, bot := range bots {
			u, err := bot.WaitSaid(context.Background(), idx[i])
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				to = sampleProc(b, pid)
			}
			said = append(said, u)
		}
		speaking = append(speaking, share(from, to))
		peakRSS = max(peakRSS, to.rssKB)
		// The whole reply: the worker's CPU sampled every 50 ms until every caller has
		// heard its reply to the end.
		var samples []procSample
		var sampling sync.WaitGroup
		stop := make(chan struct{})
		sampling.Add(1)
		go func() {
			defer sampling.Done()
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					samples = append(samples, sampleProc(b, pid))
				}
			}
		}()

		// Listening: from the last caller hearing the reply begin, 4 s of the reply.
		var heard time.Time
		for i, bot := range bots {
			var s callerbot.Sound
			ok := false
			deadline := time.Now().Add(15 * time.Second)
			for !ok && time.Now().Before(deadline) {
				s, ok = bot.SoundAfter("", said[i].End)
				if !ok {
					time.Sleep(10 * time.Millisecond)
				}
			}
			if !ok {
				missed++
				continue
			}
			responses = append(responses, s.Start.Sub(said[i].End))
			if s.Start.After(heard) {
				heard = s.Start
			}
		}
		if heard.IsZero() {
			b.Fatalf("turn %d: no caller heard a reply", turn)
		}
		time.Sleep(time.Until(heard))
		lfrom := sampleProc(b, pid)
		time.Sleep(4 * time.Second)
		lto := sampleProc(b, pid)
		listening = append(listening, share(lfrom, lto))
		peakRSS = max(peakRSS, lto.rssKB)
		for _, bot := range bots {
			waitSilent(b, bot, 30*time.Second)
		}
		close(stop)
		sampling.Wait()
		var replyEnd time.Time
		for _, bot := range bots {
			if s := bot.Sounds(); len(s) > 0 && s[len(s)-1].End.After(replyEnd) {
				replyEnd = s[len(s)-1].End
			}
		}
		if i := slices.IndexFunc(samples, func(p procSample) bool { return !p.at.Before(replyEnd) }); i >= 0 {
			replying = append(replying, share(to, samples[i]))
		}
	}
	load = append(load, loadAverage())

	perCall := func(total float64) float64 { return (total - idle) / float64(k) * 1000 } // ms of CPU per call-second
	silent := perCall(share(silentFrom, silentTo))
	speak := perCall(mean(speaking))
	listen := perCall(mean(listening))
	reply := perCall(mean(replying))
	rssPerCall := float64(peakRSS-idleTo.rssKB) / 1024 / float64(k)
	slices.Sort(responses)
	p50, p95 := 0.0, 0.0
	if len(responses) > 0 {
		p50 = float64(percentileOf(responses, 50).Milliseconds())
		p95 = float64(percentileOf(responses, 95).Milliseconds())
	}
	fmt.Printf("worker-cpu %s: %d concurrent calls; idle worker %.1f ms CPU/s, RSS %.0f MB; per call: silent %.1f, caller speaking %.1f, caller listening %.1f ms CPU per call-second (%.1f / %.1f / %.1f calls per core); the whole reply (end of the caller's speech to the end of the reply) %.1f ms/s; RSS +%.1f MB per call; response p50 %.0f ms p95 %.0f ms (n=%d, unanswered %d); load average %s, then %s\n",
		name, k, idle*1000, float64(idleTo.rssKB)/1024, silent, speak, listen,
		1000/silent, 1000/speak, 1000/listen, reply, rssPerCall, p50, p95, len(responses), missed, load[0], load[1])
	b.ReportMetric(idle*1000, "idle-cpu-ms/s")
	b.ReportMetric(silent, "silent-cpu-ms/call-s")
	b.ReportMetric(speak, "speaking-cpu-ms/call-s")
	b.ReportMetric(listen, "listening-cpu-ms/call-s")
	b.ReportMetric(reply, "reply-cpu-ms/call-s")
	b.ReportMetric(rssPerCall, "rss-MB/call")
	b.ReportMetric(p50, "response-ms")
	b.ReportMetric(p95, "response-p95-ms")
	if missed > 0 {
		b.Errorf("%d of %d turns went unanswered", missed, 2*k)
	}
}

// joinCallers places k calls of media on the worker, each with a silent callerbot as
// its caller, and waits until every caller has heard its greeting to the end. hangUp
// has the callers leave and waits for every call's ended report.
func joinCallers(b *testing.B, e *env, k int, media string) (bots []*callerbot.Bot, hangUp func()) {
	b.Helper()
	bots = make([]*callerbot.Bot, k)
	jobs := make([]string, k)
	hangUp = func() {
		leaveAll(bots)
		waitEnded(b, e, jobs, 30*time.Second)
	}
	joined := false
	defer func() {
		if !joined { // a Fatal on the way: the callers leave all the same
			leaveAll(bots)
		}
	}()
	for i := range bots {
		bot, job, err := joinCaller(e, media)
		if err != nil {
			b.Fatal(err)
		}
		bots[i], jobs[i] = bot, job
	}
	for _, bot := range bots {
		eventually(b, 30*time.Second, "greeting audio", func() bool { return !bot.FirstSound().IsZero() })
	}
	for _, bot := range bots {
		waitSilent(b, bot, 30*time.Second)
	}
	joined = true
	return bots, hangUp
}

// joinCaller places one call of media on the worker with a silent callerbot as its
// caller, and returns the bot and the job's call id.
func joinCaller(e *env, media string) (*callerbot.Bot, string, error) {
	job := testJob(fmt.Sprintf("call_cpu_%s_%d", media, seq.Add(1)), media, "ava_maya")
	job.AnsweredAt = time.Now().UTC()
	token := e.call("room-"+job.CallID, job)
	silence := callerbot.Silence()
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: e.lk.URL, Token: token, Audio: &silence, Video: media == "video"})
	return bot, job.CallID, err
}

// waitEnded waits for the ended report of every call in ids.
func waitEnded(b testing.TB, e *env, ids []string, within time.Duration) {
	b.Helper()
	left := map[string]bool{}
	for _, id := range ids {
		left[id] = true
	}
	deadline := time.After(within)
	for len(left) > 0 {
		select {
		case r := <-e.reports:
			if r.Kind == persona.ReportEnded {
				delete(left, r.CallID)
			}
		case <-deadline:
			b.Fatalf("no ended report within %v for %d calls", within, len(left))
		}
	}
}

// waitSilent waits until the bot has heard nothing for a second.
func waitSilent(b testing.TB, bot *callerbot.Bot, within time.Duration) {
	b.Helper()
	eventually(b, within, "silence", func() bool { return heardNothingFor(bot, time.Second) })
}

// heardNothingFor reports whether the bot has heard no sound for the last d.
func heardNothingFor(bot *callerbot.Bot, d time.Duration) bool {
	s := bot.Sounds()
	return len(s) == 0 || (!s[len(s)-1].Ongoing && time.Since(s[len(s)-1].End) > d)
}

// leaveAll has every caller placed so far leave its call.
func leaveAll(bots []*callerbot.Bot) {
	for _, bot := range bots {
		if bot != nil {
			bot.Leave()
		}
	}
}

func mean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

func percentileOf(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
