package delivery_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/egress/egresstest"
)

// countingReceiver is a webhook receiver on 127.0.0.1 that counts the TCP connections it
// accepts, the figure that proves a refused destination was never reached.
type countingReceiver struct {
	accepts atomic.Int64
	port    int
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func startCountingReceiver(t *testing.T) *countingReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &countingReceiver{port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(countingListener{Listener: ln, n: &r.accepts})
	}()
	t.Cleanup(func() { srv.Close(); <-done })
	return r
}

// TestSSRFMatrixAtDial: every refused address form, reached by a name that resolves to it
// and by the literal address (an endpoint stored before the create-time check, or one
// whose name re-resolves), gives a blocked_destination attempt with no status code and no
// duration, and the receiver on 127.0.0.1 accepts no connection. The same names reach it
// when resolved to loopback with loopback allowed, so the refusal is the policy's, not a
// failed lookup.
func TestSSRFMatrixAtDial(t *testing.T) {
	rcv := startCountingReceiver(t)
	names := map[string]netip.Addr{"loopback-ok.hooks.test.": netip.MustParseAddr("127.0.0.1")}
	hostOf := map[string]string{}
	for i, tc := range egress.Refused {
		name := fmt.Sprintf("h%d.hooks.test", i)
		names[name+"."] = netip.MustParseAddr(tc.Addr)
		hostOf[tc.Form] = name
	}
	dns := egresstest.StartDNS(t, names)
	strict := &delivery.Deliverer{Client: delivery.NewClientDialer(egress.Policy{}.Dialer(dns.Resolver()))}
	local := &delivery.Deliverer{Client: delivery.NewClientDialer(egress.Policy{AllowLoopback: true}.Dialer(dns.Resolver()))}
	post := func(d *delivery.Deliverer, host string) delivery.Attempt {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		ep := delivery.Endpoint{ID: "whep_1", URL: fmt.Sprintf("http://%s:%d/hooks", host, rcv.port),
			Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Enabled: true}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, _, _ := d.Post(ctx, ep, "evt_1", []byte(`{}`))
		return a
	}
	wantBlocked := func(t *testing.T, how string, a delivery.Attempt) {
		t.Helper()
		if a.Error != delivery.ErrorBlockedDestination || a.StatusCode != 0 || a.DurationMS != 0 || a.Outcome != delivery.OutcomeFailed {
			t.Errorf("%s: attempt error %q status %d duration %d ms outcome %s, want %q, 0, 0, %s",
				how, a.Error, a.StatusCode, a.DurationMS, a.Outcome, delivery.ErrorBlockedDestination, delivery.OutcomeFailed)
		}
	}
	for _, tc := range egress.Refused {
		t.Run(tc.Form, func(t *testing.T) {
			before := rcv.accepts.Load()
			wantBlocked(t, "name "+hostOf[tc.Form], post(strict, hostOf[tc.Form]))
			wantBlocked(t, "literal "+tc.Addr, post(strict, tc.Addr))
			if !tc.Loopback {
				wantBlocked(t, "loopback allowed, name "+hostOf[tc.Form], post(local, hostOf[tc.Form]))
				wantBlocked(t, "loopback allowed, literal "+tc.Addr, post(local, tc.Addr))
			}
			if got := rcv.accepts.Load() - before; got != 0 {
				t.Errorf("receiver accepted %d connections, want 0", got)
			}
		})
	}
	t.Run("loopback allowed reaches the receiver", func(t *testing.T) {
		before := rcv.accepts.Load()
		if a := post(local, "loopback-ok.hooks.test"); a.Outcome != delivery.OutcomeSucceeded || a.StatusCode != http.StatusNoContent {
			t.Errorf("attempt = %+v, want succeeded with 204", a)
		}
		if got := rcv.accepts.Load() - before; got != 1 {
			t.Errorf("receiver accepted %d connections, want 1", got)
		}
	})
}

// TestNonCanonicalHostsBlockedAtDial: an endpoint whose host is not written canonically
// (stored before the create-time check) is never resolved nor reached, even where a DNS
// server answers that name with an address the policy lets through (loopback, allowed
// here): the attempt is blocked_destination with no status and no duration.
func TestNonCanonicalHostsBlockedAtDial(t *testing.T) {
	rcv := startCountingReceiver(t)
	names := map[string]netip.Addr{}
	for _, h := range []string{"0xa9fea9fe", "2852039166", "169.254.43518", "hooks.example.254"} {
		names[h+"."] = netip.MustParseAddr("127.0.0.1")
	}
	dns := egresstest.StartDNS(t, names)
	local := &delivery.Deliverer{Client: delivery.NewClientDialer(egress.Policy{AllowLoopback: true}.Dialer(dns.Resolver()))}
	for name := range names {
		host := strings.TrimSuffix(name, ".")
		t.Run(host, func(t *testing.T) {
			ep := delivery.Endpoint{ID: "whep_1", URL: fmt.Sprintf("http://%s:%d/hooks", host, rcv.port),
				Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Enabled: true}
			before := rcv.accepts.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a, _, _ := local.Post(ctx, ep, "evt_1", []byte(`{}`))
			if a.Error != delivery.ErrorBlockedDestination || a.StatusCode != 0 || a.DurationMS != 0 {
				t.Errorf("attempt error %q status %d duration %d ms, want %q, 0, 0", a.Error, a.StatusCode, a.DurationMS, delivery.ErrorBlockedDestination)
			}
			if got := rcv.accepts.Load() - before; got != 0 {
				t.Errorf("receiver accepted %d connections, want 0", got)
			}
		})
	}
}

// TestPlainHTTPRefusedAtDial: an endpoint stored with a plain http URL (before every
// endpoint had to be https) gets nothing sent: the attempt is https_required, with no
// status and no duration, and the name is not even looked up. Loopback receivers stay
// reachable over http where the policy lets loopback through (the local stack).
func TestPlainHTTPRefusedAtDial(t *testing.T) {
	rcv := startCountingReceiver(t)
	post := func(d *delivery.Deliverer, url string) delivery.Attempt {
		ep := delivery.Endpoint{ID: "whep_1", URL: url, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Enabled: true}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, _, _ := d.Post(ctx, ep, "evt_1", []byte(`{}`))
		return a
	}
	local := &delivery.Deliverer{Client: delivery.NewClient(egress.Policy{AllowLoopback: true})}
	strict := &delivery.Deliverer{Client: delivery.NewClient(egress.Policy{})}
	for _, d := range []*delivery.Deliverer{local, strict} {
		if a := post(d, "http://hooks.example.com/in"); a.Error != delivery.ErrorHTTPSRequired || a.StatusCode != 0 || a.DurationMS != 0 {
			t.Errorf("http to a public name: attempt error %q status %d duration %d ms, want %q, 0, 0", a.Error, a.StatusCode, a.DurationMS, delivery.ErrorHTTPSRequired)
		}
	}
	if a := post(strict, fmt.Sprintf("http://127.0.0.1:%d/hooks", rcv.port)); a.Error != delivery.ErrorBlockedDestination {
		t.Errorf("http to loopback, loopback refused: attempt error %q, want %q", a.Error, delivery.ErrorBlockedDestination)
	}
	if a := post(local, fmt.Sprintf("http://127.0.0.1:%d/hooks", rcv.port)); a.Outcome != delivery.OutcomeSucceeded {
		t.Errorf("http to loopback, loopback allowed: attempt = %+v, want succeeded", a)
	}
	if got := rcv.accepts.Load(); got != 1 {
		t.Errorf("receiver accepted %d connections, want 1 (the allowed loopback one)", got)
	}
}
