package runtimeapi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Build compiles the function package pkg (an import path or ./path) into out as a
// static binary, the way the deployable `bootstrap` is built (CGO_ENABLED=0, -trimpath),
// for goos/goarch. Tests pass the host's to run it here.
func Build(ctx context.Context, dir, pkg, out, goos, goarch string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-tags=lambda.norpc", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Process is a function binary running against a Server.
type Process struct {
	API     *Server
	cmd     *exec.Cmd
	done    chan struct{}
	mu      sync.Mutex
	out     bytes.Buffer
	Started time.Time
}

// Run starts bin as Lambda's provided.al2023 runtime does: with AWS_LAMBDA_RUNTIME_API
// pointing at a new Server, the usual Lambda variables, and env added. The process
// inherits no other environment, so it sees only what a deployed function would.
func Run(bin, name string, env []string) (*Process, error) {
	api, err := Start("arn:aws:lambda:us-east-1:000000000000:function:"+name, 30*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{API: api, done: make(chan struct{})}
	p.cmd = exec.Command(bin)
	p.cmd.Dir = filepath.Dir(bin)
	p.cmd.Env = append([]string{
		"AWS_LAMBDA_RUNTIME_API=" + api.Addr(),
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"_HANDLER=bootstrap",
		"TZ=:UTC",
		"PATH=/usr/local/bin:/usr/bin:/bin",
	}, env...)
	p.cmd.Stdout = (*lockedWriter)(p)
	p.cmd.Stderr = (*lockedWriter)(p)
	p.Started = time.Now()
	if err := p.cmd.Start(); err != nil {
		api.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Invoke sends one event and returns the function's result. It fails fast if the
// process exits.
func (p *Process) Invoke(ctx context.Context, event []byte) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	r, err := p.API.Invoke(ctx, event)
	if err != nil {
		select {
		case <-p.done:
			return r, fmt.Errorf("%w; process exited: %s; output:\n%s", err, p.cmd.ProcessState, p.Output())
		default:
		}
		return r, fmt.Errorf("%w; output:\n%s", err, p.Output())
	}
	return r, nil
}

// Output is what the process wrote to stdout and stderr so far (its CloudWatch log).
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Exited is closed when the process has exited (a function that refuses to start).
func (p *Process) Exited() <-chan struct{} { return p.done }

// Stop ends the process and the Runtime API.
func (p *Process) Stop() {
	p.cmd.Process.Kill()
	<-p.done
	p.API.Close()
}

type lockedWriter Process

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(b)
}
