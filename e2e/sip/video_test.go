package sip_test

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
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
	l := r.line(t, "+15550170051", tr.ID, map[string]any{"assistant_id": a.ID, "name": "Video desk"})
	wav, said := speechWAV(t, part{pause: 8 * time.Second}, part{say: question}, part{pause: 8 * time.Second})
	phone := r.phone(t, sipphone.Config{Number: "+15559990051", Speak: wav, Video: true})
	dir := t.TempDir()

	invite := time.Now()
	out, err := phone.Dial(ctx, "sip:"+l.Handle+"@"+r.st.SIPVideo.SIPAddr())
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

	time.Sleep(time.Until(invite.Add(said[0].end + 8*time.Second)))
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
