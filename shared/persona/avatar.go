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

// AvatarRequest asks for the sheet of avatar AvatarID of the call's account.
type AvatarRequest struct {
	CallID    string `json:"call_id"`
	AccountID string `json:"account_id"`
	AvatarID  string `json:"avatar_id"`
}

// AvatarSheet is an own avatar as the worker draws it.
type AvatarSheet struct {
	ID    string            `json:"id"`
	Parts []AvatarSheetPart `json:"parts"`
	// ExpiresAt is when the parts' URLs stop working.
	ExpiresAt time.Time `json:"expires_at"`
}

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
	if req.AccountID == "" || req.AvatarID == "" {
		return AvatarRequest{}, fmt.Errorf("%w: account_id and avatar_id are required", ErrReportMalformed)
	}
	return req, nil
}
