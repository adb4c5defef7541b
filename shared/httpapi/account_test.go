package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// logoPNG is a w x h PNG of one colour.
func logoPNG(t *testing.T, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestContractAccount: GET /v1/account answers the account's branding; PATCH changes
// name, colour, support URL and logo (base64) and keeps what it is not given; each bad
// value is a 400 naming the field and the fix, and changes nothing.
func TestContractAccount(t *testing.T) {
	c := newContract(t, nil)
	a := c.OK("GET", "/v1/account", "", 200)
	if a.Str("object") != "account" || a.Str("id") != c.st.acctID || a.Body["logo"] != nil || a.Body["support_url"] != nil {
		t.Fatalf("GET /v1/account = %s", a.Raw)
	}
	logo := logoPNG(t, 120, 60, color.RGBA{R: 0xe0, G: 0x20, B: 0xa0, A: 0xff})
	b64 := base64.StdEncoding.EncodeToString(logo)
	a = c.OK("PATCH", "/v1/account", `{"name": "Acme Dental", "brand_color": "#0A7B83", "support_url": "https://acme.example/help", "logo": "`+b64+`"}`, 200)
	l, _ := a.Body["logo"].(map[string]any)
	if a.Str("name") != "Acme Dental" || a.Str("brand_color") != "#0a7b83" || a.Str("support_url") != "https://acme.example/help" ||
		l == nil || l["content_type"] != "image/png" || l["width"] != 120.0 || l["height"] != 60.0 || l["bytes"] != float64(len(logo)) {
		t.Fatalf("PATCH /v1/account = %s", a.Raw)
	}
	stored, err := c.st.store.GetLogo(t.Context(), c.st.acctID)
	if err != nil || !bytes.Equal(stored.Data, logo) {
		t.Errorf("stored logo: %d bytes, %v; want the %d bytes sent", len(stored.Data), err, len(logo))
	}
	// A data: URL is taken too; one field changes, the others stay.
	a = c.OK("PATCH", "/v1/account", `{"brand_color": "#112233", "logo": "data:image/png;base64,`+b64+`"}`, 200)
	if a.Str("name") != "Acme Dental" || a.Str("brand_color") != "#112233" || a.Str("support_url") != "https://acme.example/help" || a.Body["logo"] == nil {
		t.Errorf("PATCH brand_color = %s, want the rest kept", a.Raw)
	}

	big := make([]byte, 260<<10) // over the limit, under the route's body limit
	copy(big, logo)
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><script>alert(1)</script></svg>`
	damaged := append([]byte{}, logo[:len(logo)/2]...)
	for _, tc := range []struct {
		name, body, code, param, says string
	}{
		{"bad colour", `{"brand_color": "teal"}`, "parameter_invalid", "brand_color", "#rrggbb"},
		{"short colour", `{"brand_color": "#abc"}`, "parameter_invalid", "brand_color", "#rrggbb"},
		{"http support URL", `{"support_url": "http://acme.example/help"}`, "url_not_allowed", "support_url", "https"},
		{"internal support URL", `{"support_url": "https://10.0.0.8/help"}`, "url_not_allowed", "support_url", "public address"},
		{"relative support URL", `{"support_url": "/help"}`, "parameter_invalid", "support_url", "absolute https URL"},
		{"blank name", `{"name": "  "}`, "parameter_invalid", "name", "blank"},
		{"long name", `{"name": "` + strings.Repeat("a", 81) + `"}`, "parameter_invalid", "name", "80"},
		{"null name", `{"name": null}`, "parameter_invalid", "name", "null"},
		{"oversize logo", `{"logo": "` + base64.StdEncoding.EncodeToString(big) + `"}`, "parameter_invalid", "logo", "256 KiB"},
		{"SVG logo", `{"logo": "` + base64.StdEncoding.EncodeToString([]byte(svg)) + `"}`, "parameter_invalid", "logo", "PNG or WebP"},
		{"not an image", `{"logo": "` + base64.StdEncoding.EncodeToString([]byte("GIF89a not really")) + `"}`, "parameter_invalid", "logo", "not a PNG, JPEG or WebP"},
		{"damaged PNG", `{"logo": "` + base64.StdEncoding.EncodeToString(damaged) + `"}`, "parameter_invalid", "logo", "does not decode"},
		{"tiny logo", `{"logo": "` + base64.StdEncoding.EncodeToString(logoPNG(t, 8, 8, color.RGBA{A: 255})) + `"}`, "parameter_invalid", "logo", "16 to 1024"},
		{"huge logo", `{"logo": "` + base64.StdEncoding.EncodeToString(logoPNG(t, 2000, 20, color.RGBA{A: 255})) + `"}`, "parameter_invalid", "logo", "16 to 1024"},
		{"not base64", `{"logo": "%%%"}`, "parameter_invalid", "logo", "base64"},
		{"nothing", `{}`, "parameter_missing", "", "changes nothing"},
		{"unknown field", `{"colour": "#112233"}`, "parameter_unknown", "colour", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Fail("PATCH", "/v1/account", tc.body, 400, tc.code)
			e, _ := r.Body["error"].(map[string]any)
			if p, _ := e["param"].(string); p != tc.param {
				t.Errorf("param %q, want %q (%s)", p, tc.param, r.Raw)
			}
			if m, _ := e["message"].(string); !strings.Contains(m, tc.says) {
				t.Errorf("message %q, want it to say %q", m, tc.says)
			}
		})
	}
	a = c.OK("GET", "/v1/account", "", 200)
	if a.Str("name") != "Acme Dental" || a.Str("brand_color") != "#112233" || a.Body["logo"] == nil {
		t.Errorf("after the refusals GET /v1/account = %s, want nothing changed", a.Raw)
	}
	// null removes the logo and the support link.
	a = c.OK("PATCH", "/v1/account", `{"logo": null, "support_url": null}`, 200)
	if a.Body["logo"] != nil || a.Body["support_url"] != nil || a.Str("name") != "Acme Dental" {
		t.Errorf("PATCH removing the logo and link = %s", a.Raw)
	}
}
