package sip_test

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/shared/call"
)

// TestVideoCallFromSIPPhone: a video SIP phone (baresip with VP8 and a test picture as
// its camera) calls an assistant line through the SIP video bridge. Its first frame is
// the brand's connecting screen, shown within moments of the answer; once the greeting
// plays it shows the avatar (neither black nor its own test picture); it hears the
// greeting and the answer to its question; the record says video.
func TestVideoCallFromSIPPhone(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const (
		greeting = "Hello, thank you for calling. How can I help you?"
		question = "What time do you open tomorrow?"
		answer   = "We open at nine in the morning."
		brandHex = "#c03a2b"
	)
	r.fake.SetReplies(script(llmtest.Reply{Text: answer}))
	harness.Must(t, r.do(t, http.MethodPatch, "/v1/account", map[string]any{"brand_color": brandHex}, nil), http.StatusOK, "brand colour")
	a := r.assistant(t, greeting, nil)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170081", tr.ID, map[string]any{"assistant_id": a.ID, "name": "Video desk"})
	wav, _ := speechWAV(t, part{pause: 8 * time.Second}, part{say: question}, part{pause: 8 * time.Second})
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990081", Speak: wav, Video: true})
	dir := t.TempDir()

	invite := time.Now()
	out, err := phone.Dial(ctx, r.videoURI(l.Handle))
	if err != nil {
		t.Fatal(err)
	}
	est, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
	if err != nil || est.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the video call was not answered: %+v %v", est, err)
	}
	t.Logf("INVITE to answered: %v", est.At.Sub(invite).Round(time.Millisecond))
	first := snapshot(ctx, t, phone, filepath.Join(dir, "first.png"))
	t.Logf("answer to the first frame at the phone: %v", first.at.Sub(est.At).Round(time.Millisecond))
	brand, _ := avatar.ParseColor(brandHex)
	ava, _ := avatar.Lookup("ava_theo")
	if c := topCorners(first.img); !nearRGB(c, brand) {
		t.Errorf("the phone's first frame has corners %v, want the connecting screen's brand colour %v", c, brand)
	}
	if d := first.at.Sub(est.At); d > 3*time.Second {
		t.Errorf("the first frame reached the phone %v after the answer, want a keyframe at once", d)
	}
	c := r.callOf(t, l.ID, nil)
	if c.Platform != "sip" || c.Media != "video" || c.HandledBy != call.HandledByAssistant || c.Direction != call.Inbound {
		t.Errorf("call record = %+v, want an inbound sip video call handled by the assistant", c)
	}

	// The greeting plays within a few seconds of the answer; the avatar is shown by then.
	harness.WaitFor(t, 30*time.Second, "the avatar at the phone", func() bool {
		s := snapshot(ctx, t, phone, filepath.Join(dir, "later.png"))
		return nearRGB(topCorners(s.img), ava.Backdrop)
	})
	later := snapshot(ctx, t, phone, filepath.Join(dir, "avatar.png"))
	if m := mean(later.img); m < 20 {
		t.Errorf("the avatar frame is black (mean %v)", m)
	}
	if bars(later.img) {
		t.Error("the phone is shown its own test picture")
	}

	assistantSaid(t, turns, c.ID, answer) // the answer to the question played
	if err := phone.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	rec, _ := r.ended(t, c.ID)
	if rec.Media != "video" || str(rec.EndReason) != call.ReasonRemoteHangup {
		t.Errorf("ended record: media %s, end reason %q; want video, the caller's hang-up", rec.Media, str(rec.EndReason))
	}
	var texts []string
	for _, turn := range rec.Transcript {
		texts = append(texts, turn.Speaker+": "+turn.Text)
	}
	if len(rec.Transcript) < 3 || rec.Transcript[0].Text != greeting || rec.Transcript[2].Text != answer {
		t.Errorf("transcript %q, want the greeting, the question and the answer", texts)
	}
	heard, err := phone.Heard()
	if err != nil {
		t.Fatal(err)
	}
	keepAudio(t, "video-heard", heard.Samples)
	snds := sounds(heard.Samples)
	if len(snds) == 0 || heardSentence(t, heard.Samples, snds[0], greeting, answer) != words(greeting) {
		t.Errorf("the phone's first sound (of %v) is not the greeting", snds)
	}
}

type frame struct {
	img image.Image
	at  time.Time
}

// snapshot has the phone save the next frame it receives and reads it.
func snapshot(ctx context.Context, t testing.TB, p *sipphone.Phone, path string) frame {
	t.Helper()
	os.Remove(path)
	if err := p.Snapshot(ctx, path); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if f, err := os.Open(path); err == nil {
			img, err := png.Decode(f)
			f.Close()
			if err == nil {
				return frame{img: img, at: time.Now()}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the phone saved no frame in 10 s: it receives no video")
	return frame{}
}

// topCorners averages the two top 8x8 corner blocks.
func topCorners(img image.Image) color.RGBA {
	b := img.Bounds()
	var sum [3]int
	n := 0
	for _, ox := range []int{b.Min.X + 2, b.Max.X - 10} {
		for y := b.Min.Y + 2; y < b.Min.Y+10; y++ {
			for x := ox; x < ox+8; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				sum[0] += int(r >> 8)
				sum[1] += int(g >> 8)
				sum[2] += int(bl >> 8)
				n++
			}
		}
	}
	return color.RGBA{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n), 255}
}

func nearRGB(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) < 32 && d(a.G, b.G) < 32 && d(a.B, b.B) < 32
}

func mean(img image.Image) float64 {
	b := img.Bounds()
	var sum, n float64
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum += float64(r>>8+g>>8+bl>>8) / 3
			n++
		}
	}
	return sum / n
}

// bars says whether img is baresip's fakevideo picture: saturated red, green and blue
// across its width.
func bars(img image.Image) bool {
	b := img.Bounds()
	y := b.Min.Y + b.Dy()/2
	var seen [3]bool
	for x := b.Min.X; x < b.Max.X; x += 4 {
		r, g, bl, _ := img.At(x, y).RGBA()
		r, g, bl = r>>8, g>>8, bl>>8
		switch {
		case r > 200 && g < 60 && bl < 60:
			seen[0] = true
		case g > 200 && r < 60 && bl < 60:
			seen[1] = true
		case bl > 200 && r < 60 && g < 60:
			seen[2] = true
		}
	}
	return seen[0] && seen[1] && seen[2]
}

// TestHostedVideoSessionOverSIP: POST /v1/sessions with media video on a SIP line rings
// a video phone through the video bridge; a client joined with the session's token gets
// the phone's camera (its test picture's size) and the phone shows the client's picture,
// from a keyframe asked for at the answer; DELETE hangs the phone up; the record is video.
func TestHostedVideoSessionOverSIP(t *testing.T) {
	r := theRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	callee := r.phone(t, sipphone.Config{Number: "+15557650082", AutoAnswer: true, Video: true})
	tr := r.trunk(t, callee.Address())
	l := r.line(t, "+15550170082", tr.ID, nil)
	var ses struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
		Media  string `json:"media"`
		RTCURL string `json:"rtc_url"`
		Token  string `json:"participant_token"`
	}
	harness.Must(t, r.do(t, http.MethodPost, "/v1/sessions", map[string]any{"line_id": l.ID, "platform_handle": callee.Number(),
		"media": "video"}, &ses), http.StatusCreated, "POST /v1/sessions")
	if ses.Media != "video" {
		t.Errorf("session media = %q, want video on a SIP line where the video bridge runs", ses.Media)
	}
	var mu sync.Mutex
	var phoneFrames []callerbot.Frame
	bot, err := callerbot.Join(ctx, callerbot.Options{URL: ses.RTCURL, Token: ses.Token, Video: true, OnFrame: func(f callerbot.Frame) {
		mu.Lock()
		phoneFrames = append(phoneFrames, f)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	in, err := callee.Incoming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	est, err := in.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
	if err != nil || est.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the callee: %+v %v, want the call answered", est, err)
	}
	first := snapshot(ctx, t, callee, filepath.Join(t.TempDir(), "client.png"))
	t.Logf("answer to the client's first frame at the phone: %v", first.at.Sub(est.At).Round(time.Millisecond))
	if d := first.at.Sub(est.At); d > 1500*time.Millisecond {
		t.Errorf("the phone showed a picture %v after the answer, want a keyframe within a second", d)
	}
	// The client's picture: a grey field (one bright bar sweeps across it).
	grey := color.RGBA{}
	grey.R, grey.G, grey.B = color.YCbCrToRGB(90, 110, 140)
	grey.A = 255
	if c := topCorners(first.img); bars(first.img) || !(nearRGB(c, grey) || mean(first.img) > 60 && mean(first.img) < 150) {
		t.Errorf("the phone shows corners %v (mean %.0f), want the client's grey picture %v", c, mean(first.img), grey)
	}
	harness.WaitFor(t, 10*time.Second, "the phone's camera at the client", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(phoneFrames) >= 5
	})
	mu.Lock()
	f := phoneFrames[len(phoneFrames)-1]
	mu.Unlock()
	if b := f.Image.Rect; b.Dx() != 352 || b.Dy() != 288 {
		t.Errorf("the client decodes the phone's camera at %v, want the test picture's 352x288", b)
	}
	// A second client's camera comes in (the newest video is shown): the phone shows it
	// from a keyframe asked for at once.
	var tok struct {
		Token string `json:"participant_token"`
	}
	harness.Must(t, r.do(t, http.MethodPost, "/v1/sessions/"+ses.ID+"/tokens", map[string]any{}, &tok), http.StatusCreated, "POST tokens")
	tint := [2]uint8{90, 200} // a red field
	want := color.RGBA{A: 255}
	want.R, want.G, want.B = color.YCbCrToRGB(90, tint[0], tint[1])
	joined := time.Now()
	bot2, err := callerbot.Join(ctx, callerbot.Options{URL: ses.RTCURL, Token: tok.Token, Video: true, VideoTint: tint})
	if err != nil {
		t.Fatal(err)
	}
	defer bot2.Leave()
	var shown time.Time
	for deadline := time.Now().Add(10 * time.Second); shown.IsZero() && time.Now().Before(deadline); {
		f := snapshot(ctx, t, callee, filepath.Join(t.TempDir(), "second.png"))
		if nearRGB(topCorners(f.img), want) {
			shown = f.at
		}
	}
	if shown.IsZero() {
		t.Fatalf("the phone never showed the second client's picture %v", want)
	}
	t.Logf("the second client's join to its picture at the phone: %v", shown.Sub(joined).Round(time.Millisecond))
	if d := shown.Sub(joined); d > 2*time.Second {
		t.Errorf("the second client's picture reached the phone %v after it joined, want a keyframe asked for at once", d)
	}
	harness.Must(t, r.do(t, http.MethodDelete, "/v1/sessions/"+ses.ID, nil, nil), http.StatusOK, "DELETE /v1/sessions")
	if ev, err := in.Closed(ctx); err != nil {
		t.Errorf("the callee's call did not end: %+v %v", ev, err)
	}
	rec, _ := r.ended(t, ses.CallID)
	if rec.Media != "video" || rec.Direction != call.Outbound {
		t.Errorf("record media %q direction %q, want an outbound video call", rec.Media, rec.Direction)
	}
}

// TestAudioOnlyPhoneOnTheVideoBridge: a phone without video calling the video bridge gets
// an audio call with the assistant's greeting; a video session that rings a phone
// without video is answered audio only, and the session and its record say audio.
func TestAudioOnlyPhoneOnTheVideoBridge(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const greeting = "Hello, thank you for calling. How can I help you?"
	a := r.assistant(t, greeting, nil)
	callee := r.phone(t, sipphone.Config{Number: "+15557650083", AutoAnswer: true})
	tr := r.trunk(t, callee.Address())
	l := r.line(t, "+15550170083", tr.ID, map[string]any{"assistant_id": a.ID})

	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990083"})
	answered(ctx, t, phone, r.videoURI(l.Handle))
	c := r.callOf(t, l.ID, nil)
	if c.Media != "audio" || c.HandledBy != call.HandledByAssistant {
		t.Errorf("call record = %+v, want an audio call handled by the assistant", c)
	}
	assistantSaid(t, turns, c.ID, "How can I help you?") // the greeting played
	if err := phone.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	r.ended(t, c.ID)
	heard, err := phone.Heard()
	if err != nil {
		t.Fatal(err)
	}
	keepAudio(t, "audio-only-heard", heard.Samples)
	if snds := sounds(heard.Samples); len(snds) == 0 || heardSentence(t, heard.Samples, snds[0], greeting, "Sorry?") != words(greeting) {
		t.Errorf("the audio-only phone's first sound (of %v) is not the greeting", snds)
	}

	var ses struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
		Media  string `json:"media"`
	}
	harness.Must(t, r.do(t, http.MethodPost, "/v1/sessions", map[string]any{"line_id": l.ID, "platform_handle": callee.Number(),
		"media": "video"}, &ses), http.StatusCreated, "POST /v1/sessions")
	in, err := callee.Incoming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if est, err := in.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED"); err != nil || est.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the callee: %+v %v, want the call answered", est, err)
	}
	harness.WaitFor(t, 10*time.Second, "the session answered", func() bool {
		var got struct {
			Status string `json:"status"`
			Media  string `json:"media"`
		}
		r.do(t, http.MethodGet, "/v1/sessions/"+ses.ID, nil, &got)
		ses.Media = got.Media
		return got.Status == "active"
	})
	if ses.Media != "audio" {
		t.Errorf("the session rung with video and answered audio only says media %q, want audio", ses.Media)
	}
	harness.Must(t, r.do(t, http.MethodDelete, "/v1/sessions/"+ses.ID, nil, nil), http.StatusOK, "DELETE /v1/sessions")
	rec, evt := r.ended(t, ses.CallID)
	if rec.Media != "audio" || !strings.Contains(string(evt.Data), `"media":"audio"`) {
		t.Errorf("record media %q, call.ended %s; want audio", rec.Media, evt.Data)
	}
}

// TestVideoBridgeRefuses: the video bridge holds the audio path's rules: wrong trunk
// credentials get 403 and no call record; a disabled line's call is refused with 486
// without an answer, recorded declined.
func TestVideoBridgeRefuses(t *testing.T) {
	r := theRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170084", tr.ID, map[string]any{"inbound_mode": "disabled"})
	uri := r.videoURI(l.Handle)

	wrong := r.phone(t, sipphone.Config{Number: "+15559990084", Video: true, AuthUser: providerUser, AuthPassword: "not-the-password-0123456789"})
	c, err := wrong.Dial(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := c.Next(ctx, "CALL_CLOSED", "CALL_ESTABLISHED"); err != nil || ev.Type != "CALL_CLOSED" || ev.Status() != 403 {
		t.Errorf("wrong credentials: the phone saw %+v %v, want 403", ev, err)
	}

	phone := r.phone(t, sipphone.Config{Number: "+15559990085", Video: true})
	refusedAtPhone(ctx, t, phone, uri, nil)
	rec := r.callOf(t, l.ID, nil)
	if rec.Status != call.StatusDeclined || rec.From != "+15559990085" {
		t.Errorf("record %+v, want the disabled line's call declined; none for the wrong credentials", rec)
	}
}

// TestVideoCallKeypad: a key pressed on a video phone reaches the assistant's model as
// it does from an audio phone ("[pressed 1]").
func TestVideoCallKeypad(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := len(r.fake.Requests())
	r.fake.SetReplies(script(llmtest.Reply{Text: "Sales, of course."}))
	a := r.assistant(t, "Hello, press one for sales.", nil)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170086", tr.ID, map[string]any{"assistant_id": a.ID})
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990086", Video: true})
	answered(ctx, t, phone, r.videoURI(l.Handle))
	c := r.callOf(t, l.ID, nil)
	assistantSaid(t, turns, c.ID, "press one") // the greeting played
	if err := phone.SendDTMF(ctx, "1", 0); err != nil {
		t.Fatal(err)
	}
	harness.WaitFor(t, 30*time.Second, "the model's request", func() bool { return len(r.fake.Requests()) > before })
	req := r.fake.Requests()[before]
	if m := req.Messages; len(m) == 0 || m[len(m)-1].Role != "user" || !strings.Contains(m[len(m)-1].Content, "[pressed 1]") {
		t.Errorf("the model got %+v, want the caller's turn with [pressed 1]", req.Messages)
	}
	if err := phone.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	r.ended(t, c.ID)
}
