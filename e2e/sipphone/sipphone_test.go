package sipphone_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

func start(t *testing.T, cfg sipphone.Config) *sipphone.Phone {
	t.Helper()
	if testing.Short() {
		t.Skip("runs baresip")
	}
	if _, err := exec.LookPath("baresip"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("baresip is required in CI (scripts/install-media-deps.sh installs baresip-core)")
		}
		t.Skip("baresip not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	p, err := sipphone.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		if t.Failed() {
			t.Logf("baresip %s log:\n%s\nevents: %+v", cfg.Number, p.Log(), p.Events())
		}
	})
	return p
}

// Two phones call each other directly, no bridge between them: what the driver does
// is what baresip does.
func TestPhoneToPhone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tone := filepath.Join(t.TempDir(), "tone.wav")
	if err := sipphone.WriteTone(tone, 440, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	caller := start(t, sipphone.Config{Number: "+15559990001", Speak: tone})
	callee := start(t, sipphone.Config{Number: "+15559990002", AutoAnswer: true})
	manual := start(t, sipphone.Config{Number: "+15559990003"})

	t.Run("a call both ways, keypad digits, hang-up", func(t *testing.T) {
		out, err := caller.Dial(ctx, callee.URI())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			t.Fatal(err)
		}
		in, err := callee.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if err := caller.SendDTMF(ctx, "4#", 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := caller.SendDTMF(ctx, "x", 0); err == nil {
			t.Error("SendDTMF(x) = nil, want an error")
		}
		time.Sleep(1500 * time.Millisecond)
		if err := caller.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		closed, err := in.Closed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if closed.Status() != 0 {
			t.Errorf("callee's call closed with %q: status %d, want a BYE (0)", closed.Param, closed.Status())
		}
		if _, err := out.Closed(ctx); err != nil {
			t.Fatal(err)
		}
		heard, err := callee.Heard()
		if err != nil {
			t.Fatal(err)
		}
		// The caller's 440 Hz tone, through G.711: strong at 440 Hz, nothing at 1 kHz.
		if got := sipphone.ToneLevel(heard, 440); got < 0.2 {
			t.Errorf("callee heard 440 Hz at %.3f of full scale over %v, want the caller's tone (0.5)", got, pcmDuration(heard))
		}
		if got := sipphone.ToneLevel(heard, 1000); got > 0.02 {
			t.Errorf("callee heard 1 kHz at %.3f, want about 0", got)
		}
		// baresip logs the RFC 4733 telephone-events it receives.
		log := callee.Log()
		for _, d := range []string{"'4'", "'#'"} {
			if !strings.Contains(log, "received event: "+d) {
				t.Errorf("callee's log lacks the telephone-event %s", d)
			}
		}
	})

	t.Run("manual answer", func(t *testing.T) {
		out, err := caller.Dial(ctx, manual.URI())
		if err != nil {
			t.Fatal(err)
		}
		in, err := manual.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Next(ctx, "CALL_INCOMING"); err != nil {
			t.Fatal(err)
		}
		if _, err := out.Next(ctx, "CALL_RINGING"); err != nil {
			t.Fatal(err)
		}
		if err := manual.Answer(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := out.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			t.Fatal(err)
		}
		if err := manual.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		if ev, err := out.Closed(ctx); err != nil || ev.Status() != 0 {
			t.Errorf("caller's call closed: %+v, %v; want a BYE", ev, err)
		}
	})

	t.Run("declined while ringing: the caller sees 486", func(t *testing.T) {
		out, err := caller.Dial(ctx, manual.URI())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := manual.Incoming(ctx); err != nil {
			t.Fatal(err)
		}
		if err := manual.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		ev, err := out.Closed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status() != 486 {
			t.Errorf("caller's call closed with %q (status %d), want 486", ev.Param, ev.Status())
		}
	})

	t.Run("unknown number: 404", func(t *testing.T) {
		out, err := caller.Dial(ctx, "sip:+15550000000@"+callee.Address())
		if err != nil {
			t.Fatal(err)
		}
		ev, err := out.Closed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status() != 404 {
			t.Errorf("call to an unknown user closed with %q (status %d), want 404", ev.Param, ev.Status())
		}
	})

	if _, err := caller.Dial(ctx, "tel:+1555"); err == nil {
		t.Error("Dial(tel:) = nil, want an error")
	}
}

func TestStartRejectsBadNumber(t *testing.T) {
	if _, err := sipphone.Start(context.Background(), sipphone.Config{Number: "a@b"}); err == nil {
		t.Error("Start(number a@b) = nil, want an error")
	}
}

func TestToneLevel(t *testing.T) {
	pcm := make([]int16, sipphone.Rate)
	for i := range pcm {
		pcm[i] = int16(16384 * math.Sin(2*math.Pi*440*float64(i)/sipphone.Rate))
	}
	p := tts.PCM{Rate: sipphone.Rate, Samples: pcm}
	if got := sipphone.ToneLevel(p, 440); math.Abs(got-0.5) > 0.01 {
		t.Errorf("ToneLevel(440 Hz sine at 0.5, 440) = %.3f, want 0.5", got)
	}
	if got := sipphone.ToneLevel(p, 1000); got > 0.01 {
		t.Errorf("ToneLevel(440 Hz sine, 1000) = %.3f, want about 0", got)
	}
	if got := sipphone.Level(pcm); math.Abs(got-0.354) > 0.01 {
		t.Errorf("Level = %.3f, want 0.354", got)
	}
	if got := sipphone.Loudest(tts.PCM{Rate: sipphone.Rate, Samples: make([]int16, 800)}, 20*time.Millisecond); got != 0 {
		t.Errorf("Loudest(silence) = %v, want 0", got)
	}
}

func pcmDuration(p tts.PCM) time.Duration {
	if p.Rate == 0 {
		return 0
	}
	return time.Duration(len(p.Samples)) * time.Second / time.Duration(p.Rate)
}
