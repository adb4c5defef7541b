package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminAccountBranding: an operator sets an account's name, colour, logo file and
// support link, each checked as the API checks it, and removes the logo and the link.
func TestAdminAccountBranding(t *testing.T) {
	_, run := adminOnSQLite(t)
	acct, err := run("account", "create", "--name", "Dev")
	if err != nil {
		t.Fatal(err)
	}
	id := acct["account_id"].(string)
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for i := range img.Pix {
		img.Pix[i] = 0xc0
	}
	img.Set(3, 3, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	logo := filepath.Join(t.TempDir(), "logo.png")
	os.WriteFile(logo, b.Bytes(), 0o600)

	got, err := run("account", "branding", id, "--name", "Acme Dental", "--color", "#0A7B83", "--logo", logo,
		"--support-url", "https://acme.example/help")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := got["logo"].(map[string]any)
	if got["name"] != "Acme Dental" || got["brand_color"] != "#0a7b83" || got["support_url"] != "https://acme.example/help" ||
		l == nil || l["content_type"] != "image/png" || l["width"] != 64.0 || l["height"] != 48.0 {
		t.Fatalf("account branding = %v", got)
	}
	if shown, err := run("account", "branding", id); err != nil || shown["name"] != "Acme Dental" || shown["logo"] == nil {
		t.Errorf("account branding (show) = %v, %v; want what was set", shown, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--color", "teal"}, "#rrggbb"},
		{[]string{"--support-url", "http://acme.example/help"}, "https"},
		{[]string{"--logo", "branding_test.go"}, "not a PNG, JPEG or WebP"},
		{[]string{"--name", " "}, "blank"},
	} {
		if _, err := run(append([]string{"account", "branding", id}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("account branding %v: err %v, want one saying %q", tc.args, err, tc.want)
		}
	}
	got, err = run("account", "branding", id, "--logo", "none", "--support-url", "none")
	if err != nil || got["logo"] != nil || got["support_url"] != nil || got["name"] != "Acme Dental" {
		t.Errorf("account branding removing the logo and link = %v, %v", got, err)
	}
}
