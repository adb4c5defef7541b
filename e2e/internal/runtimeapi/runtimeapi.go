// Package runtimeapi serves the AWS Lambda Runtime API (version 2018-06-01) on 127.0.0.1,
// so a function's real `bootstrap` can run here the way Lambda runs it: the process is
// started with AWS_LAMBDA_RUNTIME_API naming this server, polls .../invocation/next for an
// event, and posts the result to .../invocation/{id}/response or .../error.
//
// It stands in for the one part of Lambda that cannot run here and speaks the same wire
// protocol, so the function's real runtime client (aws-lambda-go) is what gets exercised.
package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const prefix = "/2018-06-01/runtime/"

// Result is what the function posted for one invocation.
type Result struct {
	// Payload is the body of .../response, or of .../error when Err is set.
	Payload []byte
	// Err is set when the function reported an error: its errorType.
	Err string
}

// InitError is the body of a function's .../init/error post.
type InitError struct {
	ErrorType    string `json:"errorType"`
	ErrorMessage string `json:"errorMessage"`
}

type invocation struct {
	id      string
	payload []byte
	result  chan Result
}

// Server is a Runtime API for one function process at a time.
type Server struct {
	srv      *http.Server
	ln       net.Listener
	arn      string
	timeout  time.Duration
	queue    chan *invocation
	mu       sync.Mutex
	inflight map[string]*invocation
	initErr  chan InitError
	seq      atomic.Int64
	closed   chan struct{}
}

// Start serves a Runtime API on a free port of 127.0.0.1. functionARN is reported to the
// function with each invocation; timeout is each invocation's deadline.
func Start(functionARN string, timeout time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		ln:       ln,
		arn:      functionARN,
		timeout:  timeout,
		queue:    make(chan *invocation),
		inflight: map[string]*invocation{},
		initErr:  make(chan InitError, 1),
		closed:   make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"invocation/next", s.next)
	mux.HandleFunc("POST "+prefix+"invocation/{id}/response", s.finish(false))
	mux.HandleFunc("POST "+prefix+"invocation/{id}/error", s.finish(true))
	mux.HandleFunc("POST "+prefix+"init/error", s.initError)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the host:port to put in AWS_LAMBDA_RUNTIME_API.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server; a function blocked on .../next sees its connection end.
func (s *Server) Close() error {
	close(s.closed)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return s.srv.Close()
	}
	return err
}

// Invoke hands payload to the function's next poll and waits for its result.
func (s *Server) Invoke(ctx context.Context, payload []byte) (Result, error) {
	inv := &invocation{
		id:      "req-" + strconv.FormatInt(s.seq.Add(1), 10),
		payload: payload,
		result:  make(chan Result, 1),
	}
	select {
	case s.queue <- inv:
	case ie := <-s.initErr:
		s.initErr <- ie
		return Result{}, fmt.Errorf("function init failed: %s: %s", ie.ErrorType, ie.ErrorMessage)
	case <-ctx.Done():
		return Result{}, fmt.Errorf("function never polled for an invocation: %w", ctx.Err())
	}
	select {
	case r := <-inv.result:
		return r, nil
	case <-ctx.Done():
		return Result{}, fmt.Errorf("function did not answer invocation %s: %w", inv.id, ctx.Err())
	}
}

func (s *Server) next(w http.ResponseWriter, r *http.Request) {
	var inv *invocation
	select {
	case inv = <-s.queue:
	case <-r.Context().Done():
		return
	case <-s.closed:
		http.Error(w, "runtime api closed", http.StatusGone)
		return
	}
	s.mu.Lock()
	s.inflight[inv.id] = inv
	s.mu.Unlock()
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(s.timeout).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", s.arn)
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(inv.payload)
}

func (s *Server) finish(failed bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		body, err := io.ReadAll(io.LimitReader(r.Body, 6<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		inv, ok := s.inflight[id]
		delete(s.inflight, id)
		s.mu.Unlock()
		if !ok {
			writeError(w, http.StatusBadRequest, "InvalidRequestID", "unknown request id "+id)
			return
		}
		res := Result{Payload: body}
		if failed {
			var e struct {
				ErrorType string `json:"errorType"`
			}
			json.Unmarshal(body, &e)
			res.Err = e.ErrorType
			if res.Err == "" {
				res.Err = strings.TrimSpace(r.Header.Get("Lambda-Runtime-Function-Error-Type"))
			}
			if res.Err == "" {
				res.Err = "Unknown"
			}
		}
		inv.result <- res
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"OK"}`)
	}
}

func (s *Server) initError(w http.ResponseWriter, r *http.Request) {
	var ie InitError
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&ie)
	select {
	case s.initErr <- ie:
	default:
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": msg})
}
