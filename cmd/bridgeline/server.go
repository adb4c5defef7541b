package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/ident"
)

// serverTimeouts bound what one connection can hold of the local API server: without
// them a client that sends its headers or body a byte at a time, or never reads the
// answer, or keeps idle connections open, holds a goroutine and a socket for good.
type serverTimeouts struct {
	ReadHeader time.Duration // request line and headers
	Read       time.Duration // the whole request, body included
	Write      time.Duration // from the end of the headers to the end of the response
	Idle       time.Duration // a kept-alive connection between requests
}

// defaultTimeouts are the local stack's. Write is the longest: an inbound call's session
// create can wait for the line's decision (at most 30 s), then LiveKit and the platform
// (10 s each); no route streams.
var defaultTimeouts = serverTimeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Write:      90 * time.Second,
	Idle:       120 * time.Second,
}

// newServer is the local stack's HTTP server over h, for loopback hosts only
// (loopbackOnly).
func newServer(h http.Handler, t serverTimeouts) *http.Server {
	return &http.Server{
		Handler:           loopbackOnly(h),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
	}
}

// loopbackOnly answers 421 host_not_allowed to a request whose Host is not a loopback
// name or address. The local stack listens on 127.0.0.1 and its /sim/ takes no
// credential: a web page whose own name its DNS server turns to 127.0.0.1 (DNS
// rebinding) is, to the browser, still the page's origin, so without this check its
// scripts could read GET /sim/calls (the browser callers' room tokens) and place calls.
// The Host header still carries the page's name, which is what is refused here.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackHost(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		id := ident.New("req")
		w.Header().Set("Request-Id", id)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMisdirectedRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{
			"type": "invalid_request_error", "code": "host_not_allowed", "request_id": id,
			"message": "the local stack answers only requests addressed to localhost or a loopback address (127.0.0.1)",
		}})
	})
}

// loopbackHost reports whether a Host header names this machine's loopback interface:
// localhost, or a loopback address written as an address (127.0.0.1, [::1]). Other
// spellings of 127.0.0.1 (127.1, 2130706433, 0x7f000001) are names to a browser, and
// names are what a rebinding page controls.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}
