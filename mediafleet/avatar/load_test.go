package avatar_test

import (
	"context"
	"image/color"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/report"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// The worker's read of an own avatar, over the real routes: it asks the control plane's
// internal route (signed with the report secret) for the sheet, reads each part from its
// signed URL, and draws the uploaded colours. Another account's id gets nothing.
func TestWorkerReadsOwnAvatar(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	folder := &avatars.Folder{Dir: t.TempDir(), Secret: []byte(strings.Repeat("s", 32))}
	svc := &avatars.Service{Store: s, Assets: folder, Assistants: s}
	secret := strings.Repeat("r", 32)
	api, err := httpapi.New(s, s, (&httpapi.Receivers{ReportSecret: secret, Avatars: svc}).Routes())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/internal/", api.Handler())
	mux.Handle(avatars.FolderPath, folder.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	folder.BaseURL = srv.URL

	sheet, err := avatars.Validate(avatartest.JSON(avatartest.Manifest()), avatartest.Files())
	if err != nil {
		t.Fatal(err)
	}
	acct := ident.New("acct")
	a, err := svc.Create(ctx, acct, sheet)
	if err != nil {
		t.Fatal(err)
	}
	rc := &report.Client{BaseURL: srv.URL, Secret: secret}
	got, err := rc.AvatarSheet(ctx, persona.AvatarRequest{CallID: ident.New("call"), AccountID: acct, AvatarID: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Parts) != len(a.Parts) || time.Until(got.ExpiresAt) > avatars.URLTTL+time.Second {
		t.Fatalf("sheet %+v", got)
	}
	loaded, err := avatar.LoadSheet(ctx, http.DefaultClient, got)
	if err != nil {
		t.Fatal(err)
	}
	scene := avatar.NewSheetScene(loaded.Avatar, loaded.Images, 640, 360)
	frame := avatar.NewFrame(640, 360)
	scene.Draw(frame, time.Second, 1)
	c := frame.YCbCrAt(avatartest.MouthX+avatartest.MouthW/2, avatartest.MouthY+avatartest.MouthH/2)
	r, g, b := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
	want := avatartest.MouthOpen
	if math.Abs(float64(r)-float64(want.R)) > 40 || math.Abs(float64(g)-float64(want.G)) > 40 || math.Abs(float64(b)-float64(want.B)) > 40 {
		t.Errorf("loaded sheet draws the open mouth as %d,%d,%d, want %v", r, g, b, want)
	}

	// Another account's avatar, or a wrong secret, gets nothing.
	if _, err := rc.AvatarSheet(ctx, persona.AvatarRequest{AccountID: ident.New("acct"), AvatarID: a.ID}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("another account's avatar: %v, want a 404", err)
	}
	bad := &report.Client{BaseURL: srv.URL, Secret: strings.Repeat("x", 32)}
	if _, err := bad.AvatarSheet(ctx, persona.AvatarRequest{AccountID: acct, AvatarID: a.ID}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong secret: %v, want a 401", err)
	}
}
