package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// Timeout bounds one attempt, from dialling to the end of the response headers.
const Timeout = 15 * time.Second

// ErrorBlockedDestination is an attempt's error when the endpoint's address, after DNS
// resolution, is one deliveries may not reach (see package egress). Such an attempt has
// no status code and no duration; it is retried on the usual schedule, as the name may
// resolve elsewhere once the customer fixes it.
const ErrorBlockedDestination = "blocked_destination"

// ErrorHTTPSRequired is an attempt's error when the endpoint's URL is plain http to
// anything but a loopback receiver the client's policy lets through (an endpoint stored
// before every endpoint had to be https): nothing is sent, as for a blocked destination.
const ErrorHTTPSRequired = "https_required"

// errPlainHTTP is the client's refusal of such a request.
var errPlainHTTP = errors.New("delivery: plain http to a non-loopback receiver")

// UserAgent identifies Bridgeline's webhook requests.
const UserAgent = "Bridgeline-Webhooks/1"

// Deliverer makes one attempt at a time and decides what comes next. It keeps no state:
// the caller stores the Attempt it returns (with the delivery's new state, when it has one).
type Deliverer struct {
	Endpoints Endpoints
	// Client sends the requests; nil means NewClient(egress.Policy{}): Timeout, no
	// redirect, and every internal address refused, loopback included.
	Client *http.Client
	// Schedule is the retry schedule; nil means DefaultSchedule.
	Schedule Schedule
	Now      func() time.Time
}

// NewClient is the HTTP client deliveries use: Timeout per attempt, no redirects (a 3xx
// is a failure: the customer should update the URL, and a redirect could point inside),
// no cookies, every connection checked against dest after DNS resolution, and plain
// http refused except to a loopback receiver dest lets through (egress.Policy.PlainHTTP):
// events carry participant tokens and signatures, never in clear text on a network.
func NewClient(dest egress.Policy) *http.Client {
	c := NewClientDialer(dest.Dialer(nil))
	c.Transport = httpsOnly{next: c.Transport, dest: dest}
	return c
}

// httpsOnly refuses a plain http request that dest does not allow.
type httpsOnly struct {
	next http.RoundTripper
	dest egress.Policy
}

func (h httpsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if host := req.URL.Hostname(); req.URL.Scheme != "https" && !h.dest.PlainHTTP(host) {
		if err := h.dest.CheckHost(host); err != nil {
			return nil, err // an internal address is a blocked destination first
		}
		return nil, errPlainHTTP
	}
	return h.next.RoundTrip(req)
}

// NewClientDialer is NewClient with a given dialer; tests give one whose resolver maps
// names to internal addresses.
func NewClientDialer(d *net.Dialer) *http.Client {
	return &http.Client{
		Timeout: Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Transport: &http.Transport{
			// No proxy: the dial-time check must see the receiver's own address, and a
			// proxy would resolve and connect on our behalf without it.
			Proxy:               nil,
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// Body is the exact JSON a receiver gets for evt: the envelope, without the account.
func Body(evt callevent.Event) ([]byte, error) {
	return json.Marshal(evt)
}

// Attempt makes attempt number n (1-based) of evt to the endpoint and returns the attempt
// to log; NextAttemptAt is set when another attempt should follow. A 410 disables the
// endpoint. found is false, and nothing is sent, when the endpoint was deleted or is
// disabled: the delivery is then canceled.
func (d *Deliverer) Attempt(ctx context.Context, evt callevent.Event, endpointID string, n int) (a Attempt, found bool, err error) {
	ep, err := d.Endpoints.Signing(ctx, evt.AccountID, endpointID)
	if err != nil {
		var nf interface{ Status() int }
		if errors.As(err, &nf) && nf.Status() == http.StatusNotFound {
			return Attempt{}, false, nil
		}
		return Attempt{}, false, err
	}
	if !ep.Enabled {
		return Attempt{}, false, nil
	}
	body, err := Body(evt)
	if err != nil {
		return Attempt{}, false, fmt.Errorf("encode %s: %w", evt.ID, err)
	}
	a, retryAfter := d.post(ctx, ep, evt.ID, body)
	a.EventID, a.AccountID, a.Number = evt.ID, evt.AccountID, n
	switch a.Outcome {
	case OutcomeGone:
		if err := d.Endpoints.Gone(ctx, ep.AccountID, ep.ID); err != nil {
			return a, true, fmt.Errorf("disable endpoint %s after 410: %w", ep.ID, err)
		}
	case OutcomeFailed:
		sched := d.Schedule
		if sched == nil {
			sched = DefaultSchedule()
		}
		if wait, ok := sched.Next(n, retryAfter); ok {
			next := a.StartedAt.Add(time.Duration(a.DurationMS)*time.Millisecond + wait)
			a.NextAttemptAt = &next
		}
	}
	return a, true, nil
}

// Post sends body to ep once, signed with the endpoint's current secrets, and classifies
// the answer. It is also how call.incoming is posted, with its own deadline in ctx.
func (d *Deliverer) Post(ctx context.Context, ep Endpoint, msgID string, body []byte) (Attempt, *http.Response, []byte) {
	return d.send(ctx, ep, msgID, body, 64<<10)
}

func (d *Deliverer) post(ctx context.Context, ep Endpoint, msgID string, body []byte) (Attempt, time.Duration) {
	a, resp, _ := d.send(ctx, ep, msgID, body, 0)
	if resp == nil {
		return a, 0
	}
	return a, RetryAfter(resp.Header, d.now())
}

// send makes the request and reads up to keep bytes of the response body.
func (d *Deliverer) send(ctx context.Context, ep Endpoint, msgID string, body []byte, keep int64) (Attempt, *http.Response, []byte) {
	start := d.now()
	a := Attempt{ID: ident.New("watt"), EndpointID: ep.ID, URL: ep.URL, StartedAt: start, Outcome: OutcomeFailed}
	finish := func() { a.DurationMS = d.now().Sub(start).Milliseconds() }
	if err := egress.CanonicalURL(ep.URL); err != nil {
		// A host some client reads as an address (0xa9fea9fe) is a name to Go's resolver,
		// which could answer it: an endpoint stored before the create-time check is never
		// looked up.
		a.Error = ErrorBlockedDestination
		return a, nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		a.Error = "invalid url"
		finish()
		return a, nil, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if err := webhook.SetHeaders(req.Header, ep.SigningSecrets(start), msgID, start, body); err != nil {
		a.Error = "invalid signing secret"
		finish()
		return a, nil, nil
	}
	resp, err := d.client().Do(req)
	if err != nil {
		a.Error = describe(err)
		if !errors.Is(err, egress.ErrBlocked) && !errors.Is(err, errPlainHTTP) {
			// A refused destination shows no timing: how long a refusal took would
			// tell the customer nothing, and must not hint at what is inside.
			finish()
		}
		return a, nil, nil
	}
	var kept []byte
	if keep > 0 {
		kept, _ = io.ReadAll(io.LimitReader(resp.Body, keep))
	}
	// Drain a little so the connection can be reused, then let go of the rest.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	finish()
	a.StatusCode = resp.StatusCode
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.Outcome = OutcomeSucceeded
	case resp.StatusCode == http.StatusGone:
		a.Outcome, a.Error = OutcomeGone, "HTTP 410: endpoint disabled"
	default:
		a.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return a, resp, kept
}

// describe turns a transport error into a short text safe to show the customer: no
// internal addresses beyond what they configured.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return ErrorBlockedDestination
	case errors.Is(err, errPlainHTTP):
		return ErrorHTTPSRequired
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "dns lookup failed"
	}
	return "connection failed"
}

func (d *Deliverer) client() *http.Client {
	if d.Client != nil {
		return d.Client
	}
	return defaultClient
}

var defaultClient = NewClient(egress.Policy{})

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}
