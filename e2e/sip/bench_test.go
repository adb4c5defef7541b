package sip_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/google/pprof/profile"
)

// BenchmarkSIPCall: a baresip phone calls a SIP line whose assistant answers, beside a
// sim (WebRTC) caller on a sim line with the same assistant, call for call in the same
// run (b.N calls each; make bench runs 12). Per platform: the call placed (the phone's
// INVITE; the sim's call placed) to the first greeting audio at the caller, and the end
// of the caller's question to the first reply audio at the caller, p50 and p95 (the
// first call of each is left out: the worker's first call warms its engines). The
// phone's times come from its recording, which starts when the call is answered, as its
// speech does. Also livekit-sip's CPU during the SIP calls, as a share of one core per
// call (one call at a time), beside its share while idle.
func BenchmarkSIPCall(b *testing.B) {
	r := theRig(b)
	r.worker(b, nil)
	const (
		greeting = "Hello, thank you for calling."
		question = "What time do you open tomorrow?"
		answer   = "We open at nine."
	)
	r.fake.SetReplies(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: answer} })
	a := r.assistant(b, greeting, nil)
	tr := r.trunk(b, "")
	l := r.line(b, "+15550170051", tr.ID, map[string]any{"assistant_id": a.ID})
	simLine := r.st.Lines[harness.Line1]
	harness.Must(b, r.do(b, http.MethodPost, "/v1/lines/"+simLine.ID+"/assign", map[string]any{"assistant_id": a.ID}, nil),
		http.StatusOK, "assign the sim line")
	wav, said := speechWAV(b, part{pause: 5 * time.Second}, part{say: question}, part{pause: 12 * time.Second})
	phone := r.phone(b, sipphone.Config{Number: "+15559990051", Speak: wav})
	sip := r.st.SIP

	idle0 := sip.CPUTime()
	time.Sleep(5 * time.Second)
	idleCPU := sip.CPUTime() - idle0

	var sipGreet, sipReply, simGreet, simReply []time.Duration
	var callCPU, callTime time.Duration
	n := 0
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		// SIP: dial, let the phone ask its question, hang up.
		c0, t0 := sip.CPUTime(), time.Now()
		invite := time.Now()
		out, err := phone.Dial(ctx, r.dialURI(l.Handle))
		if err != nil {
			b.Fatal(err)
		}
		est, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
		if err != nil || est.Type != "CALL_ESTABLISHED" {
			b.Fatalf("call %d: %+v %v", n, est, err)
		}
		time.Sleep(said[0].end + 8*time.Second) // the reply, even on a loaded machine
		if err := phone.Hangup(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := out.Closed(ctx); err != nil {
			b.Fatal(err)
		}
		callCPU, callTime = callCPU+sip.CPUTime()-c0, callTime+time.Since(t0)
		heard, err := phone.Heard()
		if err != nil {
			b.Fatal(err)
		}
		snds := sounds(heard.Samples)
		if len(snds) == 0 {
			b.Fatalf("call %d: the phone heard nothing", n)
		}
		reply := slices.IndexFunc(snds, func(s sound) bool { return s.start > said[0].end })
		if n > 0 {
			sipGreet = append(sipGreet, est.At.Sub(invite)+snds[0].start)
			if reply >= 0 {
				sipReply = append(sipReply, snds[reply].start-said[0].end)
			}
		}

		// Sim: the same on the sim line, a bot caller in the room over WebRTC.
		placed := time.Now()
		sc, err := r.st.Sim.Place(platformsim.PlaceRequest{From: "+15551230051", To: simLine.Handle, Media: "audio"})
		if err != nil {
			b.Fatal(err)
		}
		var bot *callerbot.Bot
		harness.WaitFor(b, 20*time.Second, "the sim call answered", func() bool {
			bot = r.st.Sim.Bot(sc.ID)
			return bot != nil
		})
		g, ok := soundAfter(bot, placed, 20*time.Second)
		if !ok {
			b.Fatalf("sim call %d: no greeting", n)
		}
		waitQuiet(bot, g.Start)
		u, err := r.st.Sim.Say(ctx, sc.ID, question)
		if err != nil {
			b.Fatal(err)
		}
		spoken, err := bot.WaitSaid(ctx, u.Index)
		if err != nil {
			b.Fatal(err)
		}
		rep, ok := soundAfter(bot, spoken.End, 10*time.Second)
		if n > 0 {
			simGreet = append(simGreet, g.Start.Sub(placed))
			if ok {
				simReply = append(simReply, rep.Start.Sub(spoken.End))
			}
		}
		if status, raw, err := r.st.Request(http.MethodPost, "/sim/calls/"+sc.ID+"/hangup", nil, ""); err != nil || status != http.StatusOK {
			b.Fatalf("hang up the sim call: %d %s %v", status, raw, err)
		}
		cancel()
		n++
	}
	if len(sipGreet) == 0 {
		b.Fatal("run at least 2 calls (-benchtime 12x)")
	}
	report := func(name string, ds []time.Duration) {
		if len(ds) == 0 {
			return
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		b.ReportMetric(ms(s[len(s)*50/100]), name+"-p50-ms")
		b.ReportMetric(ms(s[min(len(s)-1, len(s)*95/100)]), name+"-p95-ms")
	}
	report("sip-greeting", sipGreet)
	report("sim-greeting", simGreet)
	report("sip-reply", sipReply)
	report("sim-reply", simReply)
	b.ReportMetric(float64(len(sipGreet)-len(sipReply)), "sip-unanswered")
	b.ReportMetric(float64(len(simGreet)-len(simReply)), "sim-unanswered")
	b.ReportMetric(100*callCPU.Seconds()/callTime.Seconds(), "sip-cpu-%-per-call")
	b.ReportMetric(100*idleCPU.Seconds()/5, "sip-cpu-%-idle")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("BenchmarkSIPCall: %d calls each; load average %s\n", n, strings.TrimSpace(string(load)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// soundAfter waits up to limit for the bot to hear a stretch of sound that began at or
// after t.
func soundAfter(bot *callerbot.Bot, t time.Time, limit time.Duration) (callerbot.Sound, bool) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s, ok := bot.SoundAfter("", t); ok {
			return s, true
		}
	}
	return callerbot.Sound{}, false
}

// waitQuiet waits (at most 15 s) until the stretch of sound that began at start is over.
func waitQuiet(bot *callerbot.Bot, start time.Time) {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, ok := bot.SoundAt("", start); ok && !s.Ongoing {
			return
		}
	}
}

// BenchmarkSIPVideoCall: a video phone (baresip, VP8) calls an assistant line through the
// SIP video bridge, beside a sim video call (WebRTC) on a sim line with the same
// assistant, call for call in the same run (make bench runs 11: the first of each is left
// out, the worker's engines warm on it). Per platform, from the call placed (the phone's
// INVITE; the sim's call placed): the first frame at the caller (the connecting screen),
// and the greeting's first audio; for the phone also the first avatar frame (its
// backdrop's colour in the frame's corners). p50 and p95.
func BenchmarkSIPVideoCall(b *testing.B) {
	r := theRig(b)
	r.worker(b, nil)
	const greeting = "Hello, thank you for calling."
	a := r.assistant(b, greeting, nil)
	tr := r.trunk(b, "")
	l := r.line(b, "+15550170091", tr.ID, map[string]any{"assistant_id": a.ID})
	simLine := r.st.Lines[harness.Line2]
	harness.Must(b, r.do(b, http.MethodPost, "/v1/lines/"+simLine.ID+"/assign", map[string]any{"assistant_id": a.ID}, nil),
		http.StatusOK, "assign the sim line")
	phone := r.phone(b, sipphone.Config{Number: "+15559990091", Video: true})
	backdrop := func() color.RGBA { av, _ := avatar.Lookup("ava_theo"); return av.Backdrop }()
	dir := b.TempDir()

	var sipFrame, sipAvatar, sipGreet, simFrame, simGreet []time.Duration
	// The bridge's CPU over the SIP calls' time: a CPU profile of this process, the
	// bridge's goroutines told apart by their label (harness.SIPVideoLabel).
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		b.Fatal(err)
	}
	var inCall time.Duration
	n := 0
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		first := filepath.Join(dir, fmt.Sprintf("first-%d.png", n))
		if err := phone.Snapshot(ctx, first); err != nil {
			b.Fatal(err)
		}
		invite := time.Now()
		out, err := phone.Dial(ctx, r.videoURI(l.Handle))
		if err != nil {
			b.Fatal(err)
		}
		est, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
		if err != nil || est.Type != "CALL_ESTABLISHED" {
			b.Fatalf("call %d: %+v %v", n, est, err)
		}
		var frameAt time.Time
		for deadline := time.Now().Add(10 * time.Second); frameAt.IsZero() && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if fi, err := os.Stat(first); err == nil && fi.Size() > 0 {
				frameAt = time.Now()
			}
		}
		var avatarAt time.Time
		for deadline := time.Now().Add(20 * time.Second); avatarAt.IsZero() && time.Now().Before(deadline); {
			if f := snapshot(ctx, b, phone, filepath.Join(dir, "later.png")); nearRGB(topCorners(f.img), backdrop) {
				avatarAt = f.at
			}
		}
		time.Sleep(4 * time.Second) // the greeting
		if err := phone.Hangup(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := out.Closed(ctx); err != nil {
			b.Fatal(err)
		}
		inCall += time.Since(est.At)
		heard, err := phone.Heard()
		if err != nil {
			b.Fatal(err)
		}
		snds := sounds(heard.Samples)
		if len(snds) == 0 || frameAt.IsZero() || avatarAt.IsZero() {
			b.Fatalf("video call %d: sounds %v, first frame %v, avatar frame %v", n, snds, frameAt, avatarAt)
		}

		placed := time.Now()
		frames := make(chan time.Time, 1)
		sc, err := r.st.Sim.Place(platformsim.PlaceRequest{From: "+15551230091", To: simLine.Handle, Media: "video",
			Party: platformsim.PartyOptions{OnFrame: func(f callerbot.Frame) {
				select {
				case frames <- f.At:
				default:
				}
			}}})
		if err != nil {
			b.Fatal(err)
		}
		var bot *callerbot.Bot
		harness.WaitFor(b, 20*time.Second, "the sim call answered", func() bool {
			bot = r.st.Sim.Bot(sc.ID)
			return bot != nil
		})
		g, ok := soundAfter(bot, placed, 20*time.Second)
		var simFirst time.Time
		select {
		case simFirst = <-frames:
		case <-time.After(10 * time.Second):
		}
		if !ok || simFirst.IsZero() {
			b.Fatalf("sim call %d: greeting %v, first frame %v", n, ok, simFirst)
		}
		if n > 0 {
			sipFrame = append(sipFrame, frameAt.Sub(invite))
			sipAvatar = append(sipAvatar, avatarAt.Sub(invite))
			sipGreet = append(sipGreet, est.At.Sub(invite)+snds[0].start)
			simFrame = append(simFrame, simFirst.Sub(placed))
			simGreet = append(simGreet, g.Start.Sub(placed))
		}
		if status, raw, err := r.st.Request(http.MethodPost, "/sim/calls/"+sc.ID+"/hangup", nil, ""); err != nil || status != http.StatusOK {
			b.Fatalf("hang up the sim call: %d %s %v", status, raw, err)
		}
		cancel()
		n++
	}
	pprof.StopCPUProfile()
	if len(sipGreet) == 0 {
		b.Fatal("run at least 2 calls (-benchtime 11x)")
	}
	bridgeCPU := labelledCPU(b, &prof, harness.SIPVideoLabel)
	b.ReportMetric(100*bridgeCPU.Seconds()/inCall.Seconds(), "bridge-%core-per-call")
	report := func(name string, ds []time.Duration) {
		s := slices.Clone(ds)
		slices.Sort(s)
		b.ReportMetric(ms(s[len(s)*50/100]), name+"-p50-ms")
		b.ReportMetric(ms(s[min(len(s)-1, len(s)*95/100)]), name+"-p95-ms")
	}
	report("sip-first-frame", sipFrame)
	report("sip-avatar-frame", sipAvatar)
	report("sip-greeting", sipGreet)
	report("web-first-frame", simFrame)
	report("web-greeting", simGreet)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("BenchmarkSIPVideoCall: %d calls each; load average %s\n", n, strings.TrimSpace(string(load)))
}

// labelledCPU is the CPU time a profile's samples whose "component" label is value
// took.
func labelledCPU(b *testing.B, prof *bytes.Buffer, value string) time.Duration {
	b.Helper()
	p, err := profile.Parse(prof)
	if err != nil {
		b.Fatal(err)
	}
	i := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" && t.Unit == "nanoseconds" })
	if i < 0 {
		b.Fatalf("no cpu nanoseconds in the profile's sample types %v", p.SampleType)
	}
	var cpu, all int64
	for _, s := range p.Sample {
		all += s.Value[i]
		if slices.Contains(s.Label["component"], value) {
			cpu += s.Value[i]
		}
	}
	if cpu == 0 {
		b.Fatalf("no CPU labelled %s in a profile of %v", value, time.Duration(all))
	}
	return time.Duration(cpu)
}
