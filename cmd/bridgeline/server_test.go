package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer runs newServer(h, t) on 127.0.0.1 until the test ends.
func startServer(t *testing.T, h http.Handler, to serverTimeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(h, to)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// closedWithin reads from c until the server closes it and returns how long that took,
// failing when it is still open after max.
func closedWithin(t *testing.T, c net.Conn, max time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(max))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", max)
	}
	return time.Since(start)
}

// TestServerTimeouts: each way a client can hold a connection of the local API ends
// when its timeout does. Without the timeouts, every case below holds the connection
// until the client lets go (the test would fail on closedWithin's bound).
func TestServerTimeouts(t *testing.T) {
	to := serverTimeouts{ReadHeader: 300 * time.Millisecond, Read: 600 * time.Millisecond, Write: 600 * time.Millisecond, Idle: 400 * time.Millisecond}
	const margin = 2 * time.Second
	slowAnswer := make(chan struct{})
	t.Cleanup(func() { close(slowAnswer) })
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-slowAnswer:
			case <-time.After(2 * to.Write):
			}
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "could not read the body", http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, "ok")
	})
	addr := startServer(t, h, to)
	dial := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("headers a byte at a time", func(t *testing.T) {
		c := dial(t)
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n") // and never the blank line
		if took := closedWithin(t, c, to.ReadHeader+margin); took < to.ReadHeader/2 {
			t.Errorf("closed after %v, before the header timeout %v", took, to.ReadHeader)
		}
	})
	t.Run("a body that never comes", func(t *testing.T) {
		c := dial(t)
		fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
		closedWithin(t, c, to.Read+margin)
	})
	t.Run("an idle kept-alive connection", func(t *testing.T) {
		c := dial(t)
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("GET / = %d %q, want 200 ok", resp.StatusCode, body)
		}
		if took := closedWithin(t, c, to.Idle+margin); took < to.Idle/2 {
			t.Errorf("idle connection closed after %v, before the idle timeout %v", took, to.Idle)
		}
	})
	t.Run("an answer that takes too long", func(t *testing.T) {
		c := dial(t)
		fmt.Fprint(c, "GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(to.Write + margin))
		b, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open %v after the request", to.Write+margin)
		}
		if strings.Contains(string(b), "200 OK") {
			t.Errorf("got %q: an answer past the write timeout must not arrive", b)
		}
	})
}

func TestDefaultTimeoutsAreSet(t *testing.T) {
	srv := newServer(http.NotFoundHandler(), defaultTimeouts)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("server timeouts header %v read %v write %v idle %v, want all set",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	// An inbound call's create may wait 30 s for the decision plus 10 s for each of
	// LiveKit and the platform: the write timeout must outlast it.
	if srv.WriteTimeout < 50*time.Second {
		t.Errorf("write timeout %v is shorter than the longest request", srv.WriteTimeout)
	}
}

// TestServerRefusesForeignHosts: the local server answers only requests addressed to a
// loopback name or address. A DNS-rebinding page reaches 127.0.0.1 under its own name
// (the dialer below stands for its DNS answer), and the browser sends that name as Host.
func TestServerRefusesForeignHosts(t *testing.T) {
	addr := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[]}`)
	}), defaultTimeouts)
	_, port, _ := net.SplitHostPort(addr)
	rebound := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr) // every name resolves to us
		},
	}}
	cases := []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LocalHost:" + port, http.StatusOK},
		{"127.0.0.1", http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"127.8.9.10:" + port, http.StatusOK},
		{"rebind.attacker.example:" + port, http.StatusMisdirectedRequest},
		{"attacker.example", http.StatusMisdirectedRequest},
		{"127.0.0.1.nip.io:" + port, http.StatusMisdirectedRequest},
		{"localhost.attacker.example:" + port, http.StatusMisdirectedRequest},
		{"2130706433:" + port, http.StatusMisdirectedRequest}, // 127.0.0.1 in decimal: a name to the browser
		{"0x7f000001:" + port, http.StatusMisdirectedRequest},
		{"127.1:" + port, http.StatusMisdirectedRequest},
		{"192.0.2.10:" + port, http.StatusMisdirectedRequest},
		{"[fe80::1%25lo]:" + port, http.StatusMisdirectedRequest},
	}
	for _, tc := range cases {
		t.Run(tc.host, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/sim/calls", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp, err := rebound.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Type, Code, RequestID string } `json:"error"`
			}
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET /sim/calls with Host %q = %d %s, want %d", tc.host, resp.StatusCode, raw, tc.want)
			}
			if tc.want == http.StatusOK {
				return
			}
			if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code != "host_not_allowed" ||
				body.Error.Type != "invalid_request_error" || resp.Header.Get("Request-Id") == "" {
				t.Errorf("refusal = %s (Request-Id %q), want the error shape with host_not_allowed", raw, resp.Header.Get("Request-Id"))
			}
			if strings.Contains(string(raw), `"data"`) {
				t.Errorf("refusal carries the handler's answer: %s", raw)
			}
		})
	}
}
