package account_test

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/egress"
)

// TestParseLogo: a logo is known by its content: a JPEG is taken whatever it is called,
// a GIF or an SVG is refused with a message that names a format to export.
func TestParseLogo(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	var j, g bytes.Buffer
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&g, img, nil); err != nil {
		t.Fatal(err)
	}
	l, err := account.ParseLogo(j.Bytes(), time.Now())
	if err != nil || l.ContentType != "image/jpeg" || l.Width != 40 || l.Height != 20 || len(l.SHA256) != 64 {
		t.Errorf("ParseLogo(JPEG) = %+v, %v", l.LogoInfo, err)
	}
	for name, data := range map[string][]byte{
		"GIF": g.Bytes(),
		"SVG": []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
	} {
		if _, err := account.ParseLogo(data, time.Now()); err == nil || !strings.Contains(err.Error(), "PNG") {
			t.Errorf("ParseLogo(%s) err = %v, want a refusal naming PNG", name, err)
		}
	}
}

// TestValidSupportURL: https with a public host only; empty removes the link.
func TestValidSupportURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"":                              true,
		"https://acme.example/help":     true,
		"http://acme.example/help":      false,
		"https://127.0.0.1/help":        false,
		"https://user:pw@acme.example/": false,
		"https://0x7f.1/":               false,
		"acme.example/help":             false,
	} {
		if err := account.ValidSupportURL(egress.Policy{}, raw); (err == nil) != ok {
			t.Errorf("ValidSupportURL(%q) = %v, want ok %v", raw, err, ok)
		}
	}
}
