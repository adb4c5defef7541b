package joinpage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/session"
)

// InfoPath is where the page asks, on load and before Start, what its link is: the
// account's branding (name, colour, logo, support URL), the assistant's name and whether
// the call can still be joined. The page sends its token in the body of a POST to its
// own origin, never in an address, so the token reaches no log; the server verifies the
// token's signature (LiveKit's key) before it answers anything, so a crafted link cannot
// dress the page as another business.
const InfoPath = Dir + "info"

// InfoPatterns is the info route (the join-info function).
var InfoPatterns = []string{"POST " + InfoPath}

// Link states the info answers.
const (
	LinkReady = "ready" // the call waits for its caller: Start joins it
	LinkLive  = "live"  // the call is under way (the caller joined, maybe in another tab)
	LinkEnded = "ended" // the call is over: nothing to join
)

// InfoJSON is the info's answer.
type InfoJSON struct {
	State string `json:"state"`
	// Media is the call's: "video" or "audio".
	Media     string    `json:"media"`
	Brand     BrandJSON `json:"brand"`
	Assistant string    `json:"assistant"`
	ExpiresAt time.Time `json:"expires_at"`
}

// BrandJSON is the account's branding as the page shows it.
type BrandJSON struct {
	Name       string `json:"name"`
	Color      string `json:"color"`
	SupportURL string `json:"support_url,omitempty"`
	// Logo is the logo as a data: URL (the page's CSP takes data: images), empty when the
	// account has none (the page draws the name's initial).
	Logo string `json:"logo,omitempty"`
}

// InfoStore is what the info reads: the token's session and its account.
type InfoStore interface {
	GetSession(ctx context.Context, id string) (session.Session, error)
	GetAccount(ctx context.Context, id string) (account.Account, error)
	GetLogo(ctx context.Context, accountID string) (account.Logo, error)
}

// InfoHandler serves InfoPath: keys verify the tokens (LiveKit's API key and secret).
func InfoHandler(store InfoStore, keys lktoken.Keys) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		var in struct {
			Token string `json:"token"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 16<<10)).Decode(&in); err != nil || in.Token == "" {
			writeErr(w, apierr.Invalid("token", "send the link's token as {\"token\": \"...\"}"))
			return
		}
		c, err := lktoken.Verify(in.Token, keys)
		switch {
		case err != nil && strings.Contains(err.Error(), "expired"):
			writeErr(w, apierr.Param(apierr.CodeSessionEnded, "token", "this call link expired: ask for a new one"))
			return
		case err != nil || c.Video == nil || c.Video.Room == "":
			writeErr(w, apierr.Invalid("token", "this is not a valid call link"))
			return
		}
		out := InfoJSON{State: LinkReady, Media: "audio", Assistant: c.Attributes[session.AttributeAssistantName],
			Brand: BrandJSON{Name: c.Attributes[session.AttributeBrandName], Color: c.Attributes[session.AttributeBrandColor]}}
		if c.ExpiresAt != nil {
			out.ExpiresAt = c.ExpiresAt.UTC()
		}
		ses, err := store.GetSession(r.Context(), c.Video.Room)
		switch {
		case errors.Is(err, apierr.ErrNotFound):
			out.State = LinkEnded
		case err != nil:
			writeErr(w, err)
			return
		case ses.Over():
			out.State = LinkEnded
		case ses.Status == session.StatusActive:
			out.State = LinkLive
		}
		if err == nil {
			out.Media = ses.Media
			if err := brand(r.Context(), store, ses.AccountID, &out.Brand); err != nil {
				writeErr(w, err)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
}

// brand reads the account's branding as it is now (a name changed after the link was
// made shows at once).
func brand(ctx context.Context, store InfoStore, accountID string, b *BrandJSON) error {
	a, err := store.GetAccount(ctx, accountID)
	if err != nil {
		return err
	}
	b.Name, b.Color, b.SupportURL = a.Name, a.BrandColor, a.SupportURL
	if a.Logo == nil {
		return nil
	}
	l, err := store.GetLogo(ctx, accountID)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.Logo = "data:" + l.ContentType + ";base64," + base64.StdEncoding.EncodeToString(l.Data)
	return nil
}

func writeErr(w http.ResponseWriter, err error) {
	e, ok := apierr.As(err)
	if !ok {
		e = apierr.New(apierr.CodeInternal, "internal error")
	}
	var body struct {
		Error struct {
			Type      string `json:"type"`
			Code      string `json:"code"`
			Message   string `json:"message"`
			Param     string `json:"param,omitempty"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	body.Error.Type, body.Error.Code, body.Error.Message, body.Error.Param = e.Type(), e.Code, e.Message, e.Param
	body.Error.RequestID = w.Header().Get("Request-Id")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status())
	json.NewEncoder(w).Encode(body)
}
