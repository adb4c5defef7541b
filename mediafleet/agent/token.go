package agent

import (
	"context"
	"sync"
	"time"

	"github.com/livekit/protocol/auth"
)

// SelfSignedTTL is how long a SelfSigned token lives.
const SelfSignedTTL = 10 * time.Minute

// SelfSigned mints each dial's registration token with a LiveKit key and secret: the
// agent grant only, valid SelfSignedTTL. For tools and tests that run their own
// livekit-server; a persona worker holds no LiveKit secret (Refreshing).
func SelfSigned(apiKey, secret string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		return auth.NewAccessToken(apiKey, secret).SetVideoGrant(&auth.VideoGrant{Agent: true}).
			SetValidFor(SelfSignedTTL).ToJWT()
	}
}

// Refreshing keeps the token fetch returns and hands it to each dial while it has more
// than refresh left; past that a dial fetches a new one first. When the fetch fails,
// a token still valid for a few seconds is used anyway, so that a worker whose
// connection drops while the control plane is briefly away registers again.
func Refreshing(fetch func(context.Context) (token string, expires time.Time, err error), refresh time.Duration) func(context.Context) (string, error) {
	var mu sync.Mutex
	var token string
	var expires time.Time
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if token != "" && expires.Sub(now) > refresh {
			return token, nil
		}
		t, e, err := fetch(ctx)
		if err != nil {
			if token != "" && expires.Sub(now) > 5*time.Second {
				return token, nil
			}
			return "", err
		}
		token, expires = t, e
		return token, nil
	}
}
