package account

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // a logo may be a JPEG
	_ "image/png"  // or a PNG
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	_ "golang.org/x/image/webp" // or a WebP

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
)

// Branding limits: what the join page, its tab and the connecting screen show.
const (
	// MaxNameChars is the longest display name, in characters.
	MaxNameChars = 80
	// MaxLogoBytes is the largest logo file: small enough to ride in one store item
	// (DynamoDB's 400 KB) and in the join page's one request for its branding.
	MaxLogoBytes = 256 << 10
	// MaxLogoPixels and MinLogoPixels bound each side of a logo, in pixels.
	MaxLogoPixels = 1024
	MinLogoPixels = 16
	// MaxSupportURLBytes is the longest support URL.
	MaxSupportURLBytes = 2048
)

// LogoTypes are the logo formats taken, by the name Go's image package gives them, with
// their media type. SVG is not among them: an SVG is a document that can carry script
// and links, not a picture the page can show safely as one.
var LogoTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// LogoInfo describes an account's logo; the bytes are kept apart from the account (read
// on every request), in Logo.
type LogoInfo struct {
	ContentType string    `json:"content_type"`
	Bytes       int       `json:"bytes"`
	Width       int       `json:"width"`
	Height      int       `json:"height"`
	SHA256      string    `json:"sha256"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Logo is a logo with its bytes.
type Logo struct {
	LogoInfo
	Data []byte
}

// BrandingChange is a change of an account's branding: nil fields keep their value. Logo
// set replaces the logo; RemoveLogo removes it.
type BrandingChange struct {
	Name       *string
	BrandColor *string
	SupportURL *string
	Logo       *Logo
	RemoveLogo bool
}

// Apply sets the change's fields (not the logo's bytes) on a.
func (c BrandingChange) Apply(a *Account) {
	if c.Name != nil {
		a.Name = *c.Name
	}
	if c.BrandColor != nil {
		a.BrandColor = strings.ToLower(*c.BrandColor)
	}
	if c.SupportURL != nil {
		a.SupportURL = *c.SupportURL
	}
	switch {
	case c.Logo != nil:
		info := c.Logo.LogoInfo
		a.Logo = &info
	case c.RemoveLogo:
		a.Logo = nil
	}
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ValidName checks a display name: 1 to MaxNameChars characters of text, no control
// characters, no leading or trailing space.
func ValidName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case strings.TrimSpace(name) == "":
		return apierr.Invalid("name", "name must not be blank: it is the company name the join page shows")
	case n > MaxNameChars || !utf8.ValidString(name):
		return apierr.Invalid("name", fmt.Sprintf("name must be at most %d characters", MaxNameChars))
	case strings.TrimSpace(name) != name:
		return apierr.Invalid("name", "name must not start or end with a space")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return apierr.Invalid("name", "name must be one line of text, without control characters")
	}
	return nil
}

// ValidColor checks a brand colour: "#rrggbb".
func ValidColor(c string) error {
	if !colorRE.MatchString(c) {
		return apierr.Invalid("brand_color", fmt.Sprintf("brand_color must be a colour written #rrggbb (such as #3b5bdb), not %q", clip(c, 20)))
	}
	return nil
}

// ValidSupportURL checks a support URL as an account's other URLs are checked (an
// absolute URL with a host and no credentials, the host written canonically and not an
// internal address: egress.Policy.CheckURL), and https whatever the key: a visitor's
// browser opens it from the join page. Empty removes it.
func ValidSupportURL(dest egress.Policy, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case len(raw) > MaxSupportURLBytes || err != nil || !u.IsAbs() || u.Hostname() == "":
		return apierr.Invalid("support_url", "support_url must be an absolute https URL such as https://example.com/help")
	case u.Scheme != "https":
		return apierr.Param(apierr.CodeURLNotAllowed, "support_url",
			"support_url must use https: the join page links visitors to it (write https://"+clip(u.Host, 60)+u.EscapedPath()+")")
	case u.User != nil:
		return apierr.Invalid("support_url", "support_url must not carry credentials")
	}
	switch err := dest.CheckURL(raw); {
	case errors.Is(err, egress.ErrNotCanonical):
		return apierr.Param(apierr.CodeURLNotAllowed, "support_url",
			"support_url's host must be a DNS name in ASCII, an IPv4 address in dotted decimal or an IPv6 address without a zone")
	case err != nil:
		return apierr.Param(apierr.CodeURLNotAllowed, "support_url",
			"support_url must be a public address: internal, loopback and private addresses are refused")
	}
	return nil
}

// ParseLogo checks a logo file: at most MaxLogoBytes, a PNG, JPEG or WebP by its
// content (not by what the sender calls it) that decodes whole, each side between
// MinLogoPixels and MaxLogoPixels. The error names what to change.
func ParseLogo(data []byte, now time.Time) (Logo, error) {
	if len(data) == 0 {
		return Logo{}, apierr.Invalid("logo", "logo is empty: send the image file's bytes, base64-encoded")
	}
	if len(data) > MaxLogoBytes {
		return Logo{}, apierr.Invalid("logo", fmt.Sprintf("logo is %d KiB, over the %d KiB limit: export it smaller (a %dx%d PNG is plenty)",
			(len(data)+1023)/1024, MaxLogoBytes>>10, 512, 512))
	}
	if looksLikeSVG(data) {
		return Logo{}, apierr.Invalid("logo", "logo is an SVG, which is not taken (it can carry script): export it as a PNG or WebP")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	typ, ok := LogoTypes[format]
	if err != nil || !ok {
		return Logo{}, apierr.Invalid("logo", "logo is not a PNG, JPEG or WebP image: send one of those (the file's own bytes, base64-encoded)")
	}
	if cfg.Width < MinLogoPixels || cfg.Height < MinLogoPixels || cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels {
		return Logo{}, apierr.Invalid("logo", fmt.Sprintf("logo is %dx%d pixels: each side must be %d to %d pixels (resize it, such as to 512x512)",
			cfg.Width, cfg.Height, MinLogoPixels, MaxLogoPixels))
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Logo{}, apierr.Invalid("logo", fmt.Sprintf("logo's %s data is damaged and does not decode: export the file again", strings.ToUpper(format)))
	}
	sum := sha256.Sum256(data)
	return Logo{LogoInfo: LogoInfo{ContentType: typ, Bytes: len(data), Width: cfg.Width, Height: cfg.Height,
		SHA256: hex.EncodeToString(sum[:]), UpdatedAt: now.UTC()}, Data: data}, nil
}

// looksLikeSVG reports an XML or SVG document, so that it gets its own message.
func looksLikeSVG(data []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	return bytes.HasPrefix(head, []byte("<?xml")) || bytes.HasPrefix(head, []byte("<svg")) || bytes.Contains(head, []byte("<svg"))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
