package main

import (
	"net/http"
	"time"
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

// newServer is the local stack's HTTP server over h.
func newServer(h http.Handler, t serverTimeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
	}
}
