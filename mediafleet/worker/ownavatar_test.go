package worker_test

import (
	"context"
	"image/color"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A video call whose version names the account's own avatar: the worker reads the sheet
// through the control plane's route and its signed URLs, and the caller's decoded frames
// show the uploaded colours: the base's backdrop, the mouth shapes changing while the
// greeting is spoken (closed once it ends), and the eyes closed at a blink. The sheet
// is read once, in the same request as the account's logo the job names.
func TestVideoCallOwnAvatar(t *testing.T) {
	e := newEnv(t)
	sheet, err := avatars.Validate(avatartest.JSON(avatartest.Manifest()), avatartest.Files())
	if err != nil {
		t.Fatal(err)
	}
	own := &testAvatar{id: ident.New("ava"), accountID: "acct_test", files: sheet.Files}
	for _, p := range sheet.Parts {
		own.parts = append(own.parts, persona.AvatarSheetPart{Name: p.Name, Format: p.Format, Width: p.Width, Height: p.Height, X: p.Anchor.X, Y: p.Anchor.Y})
	}
	e.ownAvatar.Store(own)
	logo := testLogo(t)
	e.logo.Store(logo)
	e.startWorker(nil)

	var mu sync.Mutex
	seen := map[string]int{}
	classify := func(c [3]uint8, names map[string]color.RGBA) string {
		for name, col := range names {
			if close3(c, ycc(col.R, col.G, col.B)) {
				return name
			}
		}
		return ""
	}
	at := func(f callerbot.Frame, x, y int) [3]uint8 {
		c := f.Image.YCbCrAt(x, y)
		return [3]uint8{c.Y, c.Cb, c.Cr}
	}
	onFrame := func(f callerbot.Frame) {
		if !close3(cornerColour(f.Image), ycc(avatartest.Backdrop.R, avatartest.Backdrop.G, avatartest.Backdrop.B)) {
			return // the connecting screen
		}
		mouth := classify(at(f, avatartest.MouthX+avatartest.MouthW/2, avatartest.MouthY+avatartest.MouthH/2), map[string]color.RGBA{
			"mouth_closed": avatartest.MouthClosed, "mouth_half": avatartest.MouthHalf, "mouth_open": avatartest.MouthOpen})
		eyes := classify(at(f, avatartest.EyesX+avatartest.EyesW/2, avatartest.EyesY+avatartest.EyesH/2), map[string]color.RGBA{
			"eyes_open": avatartest.Skin, "eyes_closed": avatartest.EyesClosed})
		mu.Lock()
		seen["avatar"]++
		seen[mouth]++
		seen[eyes]++
		mu.Unlock()
	}
	count := func(k string) int { mu.Lock(); defer mu.Unlock(); return seen[k] }

	job := testJob("call_own_avatar", "video", own.id)
	job.Brand.Logo = logo.SHA256
	token := e.call("room-own-avatar", job)
	speech, err := callerbot.Speech(context.Background(), &espeak.Synthesizer{}, "Hello.")
	if err != nil {
		t.Fatal(err)
	}
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token, Audio: &speech, Video: true, OnFrame: onFrame})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	heardGreeting(t, bot)
	// Blinks come every 3 to 5 s: wait for one, and for the mouth at rest after the greeting.
	eventually(t, 12*time.Second, "a blink frame and the closed mouth", func() bool {
		return count("eyes_closed") > 0 && count("mouth_closed") > 0
	})
	mu.Lock()
	t.Logf("frames seen: %v", seen)
	if seen["mouth_open"]+seen["mouth_half"] == 0 {
		t.Errorf("no frame showed an open or half-open mouth while the greeting was spoken: %v", seen)
	}
	if seen["eyes_open"] == 0 {
		t.Errorf("no frame showed the open eyes: %v", seen)
	}
	mu.Unlock()
	bot.Leave()
	e.reportsUntilEnded(job.CallID, 20*time.Second)
	if n, l, asks := e.sheetReads.Load(), e.logoReads.Load(), e.avatarRequests.Load(); n != 1 || l != 1 || asks != 1 {
		t.Errorf("the sheet was read %d times and the logo %d, in %d requests; want each once, in one", n, l, asks)
	}
}
