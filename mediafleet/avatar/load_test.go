package avatar_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/report"
	"github.com/bridgeline/bridgeline/shared/account"
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

// The worker's read of the account's logo for the connecting screen, over the real
// route: a call with a built-in avatar asks for the logo alone; the answer carries the
// file the account uploaded, which decodes and draws. An account without a logo gets
// none, and a request for neither an avatar nor a logo is refused.
func TestWorkerReadsAccountLogo(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	secret := strings.Repeat("r", 32)
	svc := &avatars.Service{Store: s, Assets: &avatars.Folder{Dir: t.TempDir(), Secret: []byte(strings.Repeat("s", 32))}, Assistants: s}
	api, err := httpapi.New(s, s, (&httpapi.Receivers{ReportSecret: secret, Avatars: svc, Logos: s}).Routes())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)

	accounts := &account.Service{Store: s, Now: time.Now}
	branded, _, err := accounts.Create(ctx, "Branded", false)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := accounts.Create(ctx, "Plain", false)
	if err != nil {
		t.Fatal(err)
	}
	green := color.RGBA{0x10, 0xc0, 0x40, 0xff}
	img := image.NewRGBA(image.Rect(0, 0, 120, 60))
	stddraw.Draw(img, img.Bounds(), image.NewUniform(green), image.Point{}, stddraw.Src)
	var file bytes.Buffer
	if err := png.Encode(&file, img); err != nil {
		t.Fatal(err)
	}
	logo, err := account.ParseLogo(file.Bytes(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBranding(ctx, branded.ID, account.BrandingChange{Logo: &logo}); err != nil {
		t.Fatal(err)
	}

	rc := &report.Client{BaseURL: srv.URL, Secret: secret}
	got, err := rc.AvatarSheet(ctx, persona.AvatarRequest{CallID: ident.New("call"), AccountID: branded.ID, Logo: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Logo == nil || got.Logo.SHA256 != logo.SHA256 || got.Logo.ContentType != "image/png" || !bytes.Equal(got.Logo.Data, file.Bytes()) || got.ID != "" {
		t.Fatalf("answer %+v, want the account's logo file and no sheet", got)
	}
	decoded, err := avatar.DecodeLogo(got.Logo.Data)
	if err != nil {
		t.Fatal(err)
	}
	frame := avatar.NewFrame(640, 360)
	avatar.NewConnecting(persona.Brand{Name: "Branded", Color: "#3b5bdb", Logo: logo.SHA256}, decoded, 640, 360).Draw(frame, 0)
	box := avatar.LogoBox(decoded.Bounds(), true, 640, 360)
	mid := frame.YCbCrAt(box.Min.X+box.Dx()/2, box.Min.Y+box.Dy()/2)
	if r, g, b := color.YCbCrToRGB(mid.Y, mid.Cb, mid.Cr); math.Abs(float64(r)-float64(green.R)) > 24 || math.Abs(float64(g)-float64(green.G)) > 24 || math.Abs(float64(b)-float64(green.B)) > 24 {
		t.Errorf("the connecting screen's logo centre is %d,%d,%d, want the logo's %v", r, g, b, green)
	}

	if got, err := rc.AvatarSheet(ctx, persona.AvatarRequest{AccountID: plain.ID, Logo: true}); err != nil || got.Logo != nil {
		t.Errorf("an account without a logo: %+v, %v; want no logo", got, err)
	}
	if _, err := rc.AvatarSheet(ctx, persona.AvatarRequest{AccountID: branded.ID}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("asking for neither: %v, want a 400", err)
	}
	bad := &report.Client{BaseURL: srv.URL, Secret: strings.Repeat("x", 32)}
	if _, err := bad.AvatarSheet(ctx, persona.AvatarRequest{AccountID: branded.ID, Logo: true}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong secret: %v, want a 401", err)
	}
}
