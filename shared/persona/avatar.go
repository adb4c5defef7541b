package persona

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// AvatarPath is where a persona worker asks the control plane for the character sheet
// of a call's own avatar (one that is not in the built-in catalogue), signed as reports
// are but under AvatarSubject. The answer (AvatarSheet) describes each part with a GET
// URL that works for a quarter of an hour: the worker only ever reads the images, and
// holds no credential for the asset store.
const AvatarPath = "/internal/persona/avatar"

// AvatarSubject is the subject of an avatar request's token.
const AvatarSubject = "bridgeline-persona-avatar"

// AvatarRequest asks for the sheet of avatar AvatarID of the call's account and, with
// Logo, for the account's logo (the connecting screen's: Brand.Logo). At least one of
// the two is asked for; AvatarID is empty on a call with a built-in avatar.
type AvatarRequest struct {
	CallID    string `json:"call_id"`
	AccountID string `json:"account_id"`
	AvatarID  string `json:"avatar_id,omitempty"`
	Logo      bool   `json:"logo,omitempty"`
}

// AvatarSheet is an own avatar as the worker draws it, with the account's logo when it
// was asked for. ID and Parts are empty when the request named no avatar.
type AvatarSheet struct {
	ID    string            `json:"id"`
	Parts []AvatarSheetPart `json:"parts"`
	// ExpiresAt is when the parts' URLs stop working.
	ExpiresAt time.Time `json:"expires_at"`
	// Logo is the account's logo, when the request asked for it and the account has
	// one; nil otherwise.
	Logo *BrandLogo `json:"logo,omitempty"`
}

// BrandLogo is an account's logo file as the worker decodes it: its bytes ride in the
// answer (base64 in JSON; account.MaxLogoBytes at most), since they are kept in the
// account store, not in the asset bucket the sheet's URLs point into.
type BrandLogo struct {
	ContentType string `json:"content_type"`
	// SHA256 names this file (Brand.Logo): a worker keeps a logo it read by it.
	SHA256 string `json:"sha256"`
	Data   []byte `json:"data"`
}

// MaxAvatarAnswerBytes bounds an answer at AvatarPath: a sheet's part list and a logo
// of at most 256 KiB, base64-encoded.
const MaxAvatarAnswerBytes = 512 << 10

// AvatarSheetPart is one image of the sheet: where it sits on the base, and its URL.
type AvatarSheetPart struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	URL    string `json:"url"`
}

// SignAvatarRequest signs an avatar request body.
func SignAvatarRequest(body []byte, secret string, now time.Time) (string, error) {
	return sign(body, secret, now, AvatarSubject)
}

// VerifyAvatarRequest reads an avatar request (SignAvatarRequest); its errors are
// VerifyReport's.
func VerifyAvatarRequest(r *http.Request, secret string) (AvatarRequest, error) {
	body, err := verified(r, secret, AvatarSubject, 4<<10)
	if err != nil {
		return AvatarRequest{}, err
	}
	var req AvatarRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return AvatarRequest{}, fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	if req.AccountID == "" || (req.AvatarID == "" && !req.Logo) {
		return AvatarRequest{}, fmt.Errorf("%w: account_id, and avatar_id or logo, are required", ErrReportMalformed)
	}
	return req, nil
}
