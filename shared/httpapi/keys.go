package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// MaxAPIKeys is how many keys (not revoked) an account may hold: enough to rotate every
// server's key one at a time, few enough that the listing needs no pages.
const MaxAPIKeys = 20

// Keys serves /v1/api_keys over the accounts' key records.
type Keys struct {
	Accounts account.Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

func (h *Keys) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Routes are the API key routes, one Lambda function each.
func (h *Keys) Routes() []Route {
	return []Route{
		{Function: "api-keys-list", Method: http.MethodGet, Pattern: "/v1/api_keys", Keys: TestKeys(), Handler: h.listKeys},
		// The key is shown in the first answer only: a replay answers without it.
		{Function: "api-keys-create", Method: http.MethodPost, Pattern: "/v1/api_keys", Keys: TestKeys(), ReplayOmits: []string{"key"}, Handler: h.createKey},
		{Function: "api-keys-delete", Method: http.MethodDelete, Pattern: "/v1/api_keys/{id}", Keys: LiveForRealResource(), Handler: h.revokeKey},
	}
}

// KeyJSON is the api_key object: never the key, except Key in the answer to create.
type KeyJSON struct {
	ID         string  `json:"id"`
	Object     string  `json:"object"`
	Mode       string  `json:"mode"`
	Prefix     string  `json:"prefix"`
	Last4      *string `json:"last4"`
	Key        string  `json:"key,omitempty"`
	CreatedAt  Time    `json:"created_at"`
	LastUsedAt *Time   `json:"last_used_at"`
	RevokedAt  *Time   `json:"revoked_at"`
}

// PresentKey maps a stored key to its JSON object.
func PresentKey(k account.Key) KeyJSON {
	mode := "test"
	if k.Live() {
		mode = "live"
	}
	return KeyJSON{ID: k.ID, Object: "api_key", Mode: mode, Prefix: k.Prefix, Last4: StringOrNull(k.Last4),
		CreatedAt: Time(k.CreatedAt), LastUsedAt: TimePtr(k.LastUsedAt), RevokedAt: TimePtr(k.RevokedAt)}
}

// listKeys pages through the account's keys, newest first, as every list does; the
// store reads them all (at most MaxAPIKeys) and the page is cut here.
func (h *Keys) listKeys(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "key")
	if err != nil {
		return 0, nil, err
	}
	keys, err := h.Accounts.ListKeys(r.Context(), AccountFrom(r.Context()).ID)
	if err != nil {
		return 0, nil, err
	}
	slices.Reverse(keys)
	keys = listing.Select(keys, func(k account.Key) string { return k.ID }, q)
	return http.StatusOK, NewList(keys, q, PresentKey), nil
}

// createKey makes a key of the same mode as the key that asks: a test key cannot make a
// live one.
func (h *Keys) createKey(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	var body struct{}
	if err := Decode(r, &body, true); err != nil {
		return 0, nil, err
	}
	acct := AccountFrom(r.Context()).ID
	svc := account.Service{Store: h.Accounts, Now: h.now, MaxKeys: MaxAPIKeys}
	text, k, err := svc.AddKey(r.Context(), acct, AccountFrom(r.Context()).Live)
	if errors.Is(err, account.ErrKeyLimit) {
		return 0, nil, apierr.New(apierr.CodeAPIKeyLimit, "an account holds at most 20 API keys: revoke one first")
	}
	if err != nil {
		return 0, nil, err
	}
	j := PresentKey(k)
	j.Key = text
	return http.StatusCreated, j, nil
}

// liveKeyForKey asks the key rule about the key a revoke names: a live key is revoked
// with a live key only, so a leaked test key cannot cut the account's production off.
// A key the account does not have is left to the revoke's own 404.
func (h *Keys) liveKeyForKey(r *http.Request, id string) error {
	return requireLiveKey(r, func() (liveResource, error) {
		k, err := h.Accounts.GetKey(r.Context(), AccountFrom(r.Context()).ID, id)
		if errors.Is(err, apierr.ErrNotFound) {
			return notLive, nil
		}
		if err != nil {
			return notLive, fmt.Errorf("get key %s: %w", id, err)
		}
		if !k.Live() {
			return notLive, nil
		}
		return liveResource{true, "key " + id + " is an sk_live_ key, which only a live key may revoke"}, nil
	})
}

func (h *Keys) revokeKey(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "key_") {
		return 0, nil, apierr.NotFound("api_key", id)
	}
	if err := h.liveKeyForKey(r, id); err != nil {
		return 0, nil, err
	}
	var k account.Key
	var err error
	// A revoke that collided with another write of the same account is tried again; the
	// second try sees the other's outcome.
	for range 3 {
		k, err = h.Accounts.RevokeKey(r.Context(), AccountFrom(r.Context()).ID, id, h.now())
		if !errors.Is(err, apierr.ErrConflict) {
			break
		}
	}
	if errors.Is(err, apierr.ErrNotFound) {
		return 0, nil, apierr.NotFound("api_key", id)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentKey(k), nil
}
