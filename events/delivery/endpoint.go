package delivery

import (
	"context"
	"time"
)

// Endpoint is a customer's webhook endpoint as delivery needs it: where an event goes
// and the secrets that sign it. The endpoint rules (shared/webhookendpoint) own the
// record and hand delivery this view of it, so the transport imports no domain package.
type Endpoint struct {
	ID        string
	AccountID string
	URL       string
	// Enabled is false once the endpoint is disabled: a delivery to it is canceled.
	Enabled bool
	// Secret signs every message; PreviousSecret, a rotated-out one, signs beside it
	// until PreviousSecretExpiresAt.
	Secret                  string
	PreviousSecret          string
	PreviousSecretExpiresAt time.Time
}

// SigningSecrets are the secrets that sign a message sent at now: the current one, and
// the previous one until its overlap ends.
func (e Endpoint) SigningSecrets(now time.Time) []string {
	s := []string{e.Secret}
	if e.PreviousSecret != "" && now.Before(e.PreviousSecretExpiresAt) {
		s = append(s, e.PreviousSecret)
	}
	return s
}

// Endpoints is what a Deliverer needs of the endpoint rules: *webhookendpoint.Service.
type Endpoints interface {
	// Signing returns the account's endpoint with its secrets opened (they are stored
	// sealed); a not-found error (an apierr with status 404) when it was deleted.
	Signing(ctx context.Context, accountID, id string) (Endpoint, error)
	// Gone disables an endpoint whose receiver answered 410 Gone; one already deleted is
	// no error.
	Gone(ctx context.Context, accountID, id string) error
}

// Subscribers finds the endpoints an event goes to: *webhookendpoint.Service.
type Subscribers interface {
	// Subscribed returns the account's enabled endpoints that want events of type typ,
	// with their secrets opened.
	Subscribed(ctx context.Context, accountID, typ string) ([]Endpoint, error)
}
