package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// PPROF_ADDR serves profiles on a loopback address only, and nothing when unset.
func TestPprofAddr(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name, addr string
		wantErr    string
		serves     bool
	}{
		{name: "unset", addr: ""},
		{name: "loopback", addr: free, serves: true},
		{name: "every interface", addr: ":6060", wantErr: "not a loopback address"},
		{name: "a host name", addr: "localhost:6060", wantErr: "not a loopback address"},
		{name: "a private address", addr: "10.0.0.5:6060", wantErr: "not a loopback address"},
		{name: "no port", addr: "127.0.0.1", wantErr: "PPROF_ADDR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PPROF_ADDR", tc.addr)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := startPprof(ctx, log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("startPprof(%q) = %v, want an error with %q", tc.addr, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("startPprof(%q) = %v", tc.addr, err)
			}
			if !tc.serves {
				return
			}
			resp, err := http.Get("http://" + tc.addr + "/debug/pprof/heap?debug=1")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), "HeapInuse") {
				t.Errorf("GET /debug/pprof/heap = %d %.80q, want 200 with the heap's figures", resp.StatusCode, b)
			}
		})
	}
}
