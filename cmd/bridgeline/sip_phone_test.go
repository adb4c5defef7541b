package main

import (
	"context"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// TestSIPPhoneScript runs scripts/sip-phone.sh as the guide says, beside `bridgeline dev`
// with its SIP bridge and a persona worker (what `make run` runs), with nothing but the
// data folder and the API's address: it makes an sk_live_ key for the dev account (the
// stack's own key is sk_test_, which may not make trunks), a trunk and a SIP line
// answered by the dev assistant, dials it with baresip speaking a sentence, and prints
// what the phone heard and the call's record. The call must have reached the line's
// assistant over SIP, and a second run must reuse the key, the trunk and the line.
func TestSIPPhoneScript(t *testing.T) {
	s := newTestStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, tool := range []string{"baresip", "flite", "ffmpeg", "jq", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required in CI (scripts/install-media-deps.sh installs it)", tool)
			}
			t.Skipf("%s not available", tool)
		}
	}
	sipBin, err := livekitsip.ResolveBinary(ctx, os.Getenv("LIVEKIT_SIP_BIN"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("livekit-sip is required in CI (make deps builds it): %v", err)
		}
		t.Skipf("livekit-sip not available: %v", err)
	}
	sipPort, err := livekitsip.FreeSIPPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	// Loopback UDP ranges below the ephemeral range that are no one else's: the bridge's
	// media, the phone's SIP port and the next (baresip's TLS), the phone's media.
	var ranges []int
	for len(ranges) < 4 {
		r, err := livekitsip.FreeUDPRange(40)
		if err != nil {
			t.Fatal(err)
		}
		overlaps := r <= sipPort && sipPort < r+40
		for _, o := range ranges {
			overlaps = overlaps || r < o+40 && o < r+40
		}
		if !overlaps {
			ranges = append(ranges, r)
		}
	}
	bridgeRTP, phonePort, phoneRTP, videoRTP := ranges[0], ranges[1], ranges[2], ranges[3]
	videoPort, err := livekitsip.FreeSIPPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "LIVEKIT_SIP_BIN="+sipBin, "SIP_PORT="+strconv.Itoa(sipPort),
		"SIP_RTP_PORTS="+strconv.Itoa(bridgeRTP)+"-"+strconv.Itoa(bridgeRTP+39), "PERSONA_WORKERS=1",
		"SIP_VIDEO_PORT="+strconv.Itoa(videoPort), "SIP_VIDEO_RTP_PORTS="+strconv.Itoa(videoRTP)+"-"+strconv.Itoa(videoRTP+39))

	// bin/bridgeline, as `make run` builds it: the script makes the live key with its
	// admin command.
	bin := filepath.Join(t.TempDir(), "bridgeline")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s.start()

	if !strings.Contains(s.logs(), "bash scripts/sip-phone.sh makes one and calls it") {
		t.Errorf("the stack does not point at the script:\n%s", s.logs())
	}
	phoneDir := filepath.Join(s.dataDir, "sip-phone")
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "sip-phone.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
		cmd.Dir = t.TempDir() // not the clone: the script finds it by its own path
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "BRIDGELINE_API_KEY=") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "BRIDGELINE_API_URL="+s.api, "BRIDGELINE_DATA="+s.dataDir, "BRIDGELINE_BIN="+bin,
			"SIP_PHONE_PORT="+strconv.Itoa(phonePort), "SIP_PHONE_RTP_PORTS="+strconv.Itoa(phoneRTP)+"-"+strconv.Itoa(phoneRTP+39))
		out, err := cmd.CombinedOutput()
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(phoneDir, "baresip.log"))
			t.Fatalf("sip-phone.sh %s: %v\n%s\nbaresip:\n%s\nstack:\n%s", strings.Join(args, " "), err, out, b, s.logs())
		}
		t.Logf("sip-phone.sh %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	devLine := lineByHandle(t, s, "+15550100001")
	devAssistant, _ := devLine["assistant_id"].(string)
	if devAssistant == "" {
		t.Fatalf("the dev line has no assistant: %v", devLine)
	}
	callRe := regexp.MustCompile(`(?m)^call (call_\w+): ended, `)

	check := func(out string) map[string]any {
		t.Helper()
		m := callRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("sip-phone.sh printed no ended call:\n%s", out)
		}
		line := lineByHandle(t, s, "+15550100010")
		if line["platform"] != "sip" || line["assistant_id"] != devAssistant {
			t.Errorf("the line the script made = %v, want a SIP line answered by the dev assistant %s", line, devAssistant)
		}
		c := s.mustDo(200, "GET", "/v1/calls/"+m[1], "")
		if c["platform"] != "sip" || c["direction"] != "inbound" || c["line_id"] != line["id"] || c["from"] != "+15559990001" ||
			c["to"] != "+15550100010" || c["handled_by"] != "assistant" || c["assistant_id"] != devAssistant || c["status"] != "ended" {
			t.Errorf("the call's record = %v, want an inbound SIP call from +15559990001 to +15550100010 the dev assistant handled", c)
		}
		var greeted bool
		for _, turn := range c["transcript"].([]any) {
			turn := turn.(map[string]any)
			greeted = greeted || turn["speaker"] == "assistant" && strings.HasPrefix(turn["text"].(string), "Hello, this is the Bridgeline dev line")
		}
		if !greeted {
			t.Errorf("the call's transcript has no greeting of the dev assistant: %v", c["transcript"])
		}
		if !strings.Contains(out, "  assistant: Hello, this is the Bridgeline dev line") {
			t.Errorf("sip-phone.sh did not print the transcript:\n%s", out)
		}
		// What the phone heard is the assistant's voice, not silence.
		heard := regexp.MustCompile(`recorded in (\S+-dec\.wav)`).FindStringSubmatch(out)
		if heard == nil {
			t.Fatalf("sip-phone.sh names no recording:\n%s", out)
		}
		b, err := os.ReadFile(heard[1])
		if err != nil {
			t.Fatal(err)
		}
		pcm, err := tts.DecodeWAV(b)
		if err != nil {
			t.Fatal(err)
		}
		if level := loudest(pcm, 200*time.Millisecond); level < 0.02 {
			t.Errorf("the phone heard silence (loudest 200 ms at %.4f of full scale)", level)
		}
		return c
	}

	// What the guide says of keys: the stack's sk_test_ key makes no trunk and no line.
	for _, req := range [][2]string{{"/v1/sip_trunks", `{"name": "t", "inbound": {"allowed_addresses": ["127.0.0.1"]}}`},
		{"/v1/lines", `{"platform": "sim", "handle": "+15550100011"}`}} {
		st, body := s.do("POST", req[0], req[1])
		if e, _ := body["error"].(map[string]any); st != 403 || e["code"] != "live_key_required" {
			t.Errorf("POST %s with the sk_test_ key = %d %v, want 403 live_key_required", req[0], st, body)
		}
	}

	out := run("--say", "What are your opening hours?", "--seconds", "16")
	for _, want := range []string{"made an sk_live_ key for the dev account", "made the trunk trunk_", "made the line +15550100010"} {
		if !strings.Contains(out, want) {
			t.Errorf("first run: no %q in\n%s", want, out)
		}
	}
	first := check(out)
	key, err := os.ReadFile(filepath.Join(phoneDir, "key"))
	if err != nil || !strings.HasPrefix(string(key), "sk_live_") {
		t.Errorf("the key the script kept: %q, %v", key, err)
	}
	if fi, err := os.Stat(filepath.Join(phoneDir, "trunk.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trunk.json (the trunk's password): %v %v", fi, err)
	}

	out = run("--seconds", "12")
	if strings.Contains(out, "made ") {
		t.Errorf("second run made something again:\n%s", out)
	}
	if second := check(out); second["id"] == first["id"] {
		t.Errorf("the second run printed the first call %s", first["id"])
	}
	if trunks := s.mustLive(t, key).mustDo(200, "GET", "/v1/sip_trunks", "")["data"].([]any); len(trunks) != 1 {
		t.Errorf("trunks after two runs: %v", trunks)
	}

	// A video call, as the README's "Video call from a SIP phone" runs it: the phone's
	// first frame is the connecting screen, the second the dev assistant's avatar.
	out = run("--video", "--seconds", "14")
	if c := check(out); c["media"] != "video" {
		t.Errorf("the video call's record says media %v, want video", c["media"])
	}
	shots := regexp.MustCompile(`what the phone saw: (\S+\.png) \(the connecting screen\) and (\S+\.png)`).FindStringSubmatch(out)
	if shots == nil {
		t.Fatalf("sip-phone.sh --video names no frames:\n%s", out)
	}
	connecting, avatarFrame := pngAt(t, shots[1]), pngAt(t, shots[2])
	if connecting.Bounds().Dx() < 320 || avatarFrame.Bounds().Dx() < 320 {
		t.Errorf("frames of %v and %v, want the bridge's video", connecting.Bounds(), avatarFrame.Bounds())
	}
	if same(connecting, avatarFrame) {
		t.Errorf("the connecting screen and the avatar frame are the same picture")
	}
}

// pngAt reads a PNG file.
func pngAt(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// same says whether two frames match to within a small average difference.
func same(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	var diff, n float64
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y += 4 {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x += 4 {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			diff += math.Abs(float64(r1)-float64(r2)) + math.Abs(float64(g1)-float64(g2)) + math.Abs(float64(b1)-float64(b2))
			n += 3
		}
	}
	return diff/n < 4*257
}

// mustLive is s with key (the script's sk_live_ one) instead of the dev key.
func (s *testStack) mustLive(t *testing.T, key []byte) *testStack {
	live := *s
	live.key = strings.TrimSpace(string(key))
	return &live
}

// loudest is the highest RMS over windows of d in p, as a share of full scale.
func loudest(p tts.PCM, d time.Duration) float64 {
	win := int(d.Seconds() * float64(p.Rate))
	var best float64
	for i := 0; win > 0 && i+win <= len(p.Samples); i += win {
		var sum float64
		for _, v := range p.Samples[i : i+win] {
			f := float64(v) / 32768
			sum += f * f
		}
		best = math.Max(best, math.Sqrt(sum/float64(win)))
	}
	return best
}
