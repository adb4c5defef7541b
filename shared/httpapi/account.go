package httpapi

import (
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
)

// AccountSettings serves GET and PATCH /v1/account: the account's branding (display
// name, brand colour, logo, support URL), which the hosted join page, its tab and the
// connecting screen of video calls show.
//
// Both take test keys: branding reaches no network (the key rule of keymode.go), and
// what a test key could do with it (rename the company a page shows) is less than what
// it can already do (a webhook endpoint receives the account's live events). The logo
// travels base64-encoded in the JSON body, so the route keeps the API's one body type.
type AccountSettings struct {
	Accounts account.Store
	// Destinations is the deployment's egress policy: a support URL's host is checked
	// as every customer URL's is.
	Destinations egress.Policy
	Now          func() time.Time
}

// maxAccountBody holds a base64-encoded MaxLogoBytes logo and the other fields.
const maxAccountBody = (account.MaxLogoBytes*4/3 + 8<<10)

// Routes are the account routes.
func (h *AccountSettings) Routes() []Route {
	return []Route{
		{Function: "account-get", Method: http.MethodGet, Pattern: "/v1/account", Keys: TestKeys(), Handler: h.get},
		{Function: "account-update", Method: http.MethodPatch, Pattern: "/v1/account", Keys: TestKeys(), MaxBody: maxAccountBody, Handler: h.update},
	}
}

// AccountJSON is the account object.
type AccountJSON struct {
	ID         string           `json:"id"`
	Object     string           `json:"object"`
	Name       string           `json:"name"`
	BrandColor string           `json:"brand_color"`
	SupportURL *string          `json:"support_url"`
	Logo       *AccountLogoJSON `json:"logo"`
	CreatedAt  Time             `json:"created_at"`
}

// AccountLogoJSON describes the account's logo.
type AccountLogoJSON struct {
	ContentType string `json:"content_type"`
	Bytes       int    `json:"bytes"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	SHA256      string `json:"sha256"`
	UpdatedAt   Time   `json:"updated_at"`
}

// AccountView is the account object of a; its times are the API's (milliseconds, UTC).
func AccountView(a account.Account) AccountJSON {
	out := AccountJSON{ID: a.ID, Object: "account", Name: a.Name, BrandColor: a.BrandColor, CreatedAt: Time(a.CreatedAt)}
	if a.SupportURL != "" {
		out.SupportURL = &a.SupportURL
	}
	if l := a.Logo; l != nil {
		out.Logo = &AccountLogoJSON{ContentType: l.ContentType, Bytes: l.Bytes, Width: l.Width, Height: l.Height,
			SHA256: l.SHA256, UpdatedAt: Time(l.UpdatedAt)}
	}
	return out
}

func (h *AccountSettings) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	// Read from the store: the authorizer's context (on AWS) carries only part of it.
	a, err := h.Accounts.GetAccount(r.Context(), AccountFrom(r.Context()).ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, AccountView(a), nil
}

type accountPatch struct {
	Name       Nullable[string] `json:"name"`
	BrandColor Nullable[string] `json:"brand_color"`
	SupportURL Nullable[string] `json:"support_url"`
	Logo       Nullable[string] `json:"logo"`
}

func (h *AccountSettings) update(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in accountPatch
	if err := Decode(r, &in, false); err != nil {
		return 0, nil, err
	}
	var c account.BrandingChange
	if in.Name.Set {
		if err := in.Name.NotNull("name"); err != nil {
			return 0, nil, err
		}
		if err := account.ValidName(in.Name.Value); err != nil {
			return 0, nil, err
		}
		c.Name = &in.Name.Value
	}
	if in.BrandColor.Set {
		if err := in.BrandColor.NotNull("brand_color"); err != nil {
			return 0, nil, err
		}
		if err := account.ValidColor(in.BrandColor.Value); err != nil {
			return 0, nil, err
		}
		c.BrandColor = &in.BrandColor.Value
	}
	if in.SupportURL.Set {
		u := in.SupportURL.Value // null and "" remove it
		if err := account.ValidSupportURL(h.Destinations, u); err != nil {
			return 0, nil, err
		}
		c.SupportURL = &u
	}
	if in.Logo.Set {
		if in.Logo.Null {
			c.RemoveLogo = true
		} else {
			data, err := decodeLogo(in.Logo.Value)
			if err != nil {
				return 0, nil, err
			}
			logo, err := account.ParseLogo(data, h.now())
			if err != nil {
				return 0, nil, err
			}
			c.Logo = &logo
		}
	}
	if c == (account.BrandingChange{}) {
		return 0, nil, apierr.New(apierr.CodeParameterMissing,
			"the body changes nothing: give at least one of name, brand_color, support_url and logo")
	}
	a, err := h.Accounts.SetBranding(r.Context(), AccountFrom(r.Context()).ID, c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, AccountView(a), nil
}

// decodeLogo reads a logo's base64 (standard, padded or not) or a data: URL of it.
func decodeLogo(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		_, b64, found := strings.Cut(rest, ";base64,")
		if !found {
			return nil, apierr.Invalid("logo", "a data: URL logo must be base64 (data:image/png;base64,...)")
		}
		s = b64
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, apierr.Invalid("logo", "logo must be the image file's bytes in base64 (such as `base64 -w0 logo.png`), or null to remove it")
	}
	return data, nil
}

func (h *AccountSettings) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
