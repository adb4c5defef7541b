// Package pipenet is a net.Listener whose connections are in-memory pipes (net.Pipe),
// for the fake servers (llmtest, deepgramtest) that tests on a simulated clock
// (testing/synctest) reach: a goroutine waiting on a socket keeps the bubble's clock
// from advancing, one waiting on a pipe does not.
package pipenet

import (
	"context"
	"net"
	"sync"
)

// Listener hands a server the far ends of the pipes its Dial makes.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	name   string
}

// New makes a listener; name is its address's.
func New(name string) *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{}), name: name}
}

// Dial connects to the listener, with the signature of net.Dialer.DialContext (the
// network and address are ignored).
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept waits for the next Dial.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the listener's name.
func (l *Listener) Addr() net.Addr { return addr(l.name) }

type addr string

func (addr) Network() string  { return "pipe" }
func (a addr) String() string { return string(a) }
