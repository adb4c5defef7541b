// Package freeport finds a port free now for a server about to be started (a local
// stack's livekit-server, DynamoDB Local, moto). Ports come from Lo up to Hi, below
// Linux's ephemeral range (32768-60999): the kernel's own free port (listening on port
// 0) is an ephemeral one, which any outgoing connection may take between the check and
// the server's bind. A stack test's livekit-server failed so ("bind: address already in
// use") with two test packages' clients beside it. livekit-sip's and the test phone's
// ports come from the same range.
package freeport

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// Lo and Hi bound the ports found: Lo up to Hi-1.
const Lo, Hi = 20000, 32768

// TCP is a TCP port free on host, and on every interface, now (the listeners that found
// it are closed).
func TCP(host string) (int, error) {
	return Find(func(p int) bool { return TCPFree(host, p) })
}

// UDP is a UDP port free on host, and on every interface, now.
func UDP(host string) (int, error) {
	return Find(func(p int) bool { return UDPFree(host, p) })
}

// TCPFree says a TCP listener can bind port on host, and on every interface, now.
func TCPFree(host string, port int) bool {
	return bindable(host, port, func(addr string) (io.Closer, error) { return net.Listen("tcp", addr) })
}

// UDPFree says a UDP socket can bind port on host, and on every interface, now.
func UDPFree(host string, port int) bool {
	return bindable(host, port, func(addr string) (io.Closer, error) { return net.ListenPacket("udp", addr) })
}

func bindable(host string, port int, listen func(addr string) (io.Closer, error)) bool {
	for _, h := range []string{host, ""} {
		c, err := listen(net.JoinHostPort(h, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// given are the ports Find returned in this process. It returns none twice: the ports a
// caller finds one after another (a server's HTTP and RTC ports, the servers of one
// test) are each found free with the listener that found the one before closed, so
// without this the same port could be found twice and the second bind fail.
var (
	givenMu sync.Mutex
	given   = map[int]bool{}
)

// Find is a random port of the range for which ok holds (a server's several ports, a
// port and the one after it), never one it returned before in this process.
func Find(ok func(port int) bool) (int, error) {
	return FindBlock(1, ok)
}

// FindBlock is the first port of a block of n ports of the range, for whose first ok
// holds (ok checks the block's ports it needs free), none of them handed out before in
// this process; all n are handed out now. A server's RTP range, or a SIP port and the
// TLS port after it, are blocks: a port found later never falls inside one.
func FindBlock(n int, ok func(first int) bool) (int, error) {
	givenMu.Lock()
	defer givenMu.Unlock()
	// From a random start, every block the process has not handed out a port of, in
	// turn: a long test process scatters ports over the range, and random blocks of 40
	// would then seldom miss them all. ok (which binds the ports) is asked at most 200
	// times.
	span := Hi - Lo - n + 1
	start, asked := rand.IntN(span), 0
	for i := 0; i < span && asked < 200; i++ {
		p := Lo + (start+i)%span
		if anyGiven(p, n) {
			continue
		}
		asked++
		if ok(p) {
			for q := p; q < p+n; q++ {
				given[q] = true
			}
			return p, nil
		}
	}
	return 0, fmt.Errorf("freeport: no block of %d ports of %d-%d free as asked", n, Lo, Hi-1)
}

func anyGiven(p, n int) bool {
	for q := p; q < p+n; q++ {
		if given[q] {
			return true
		}
	}
	return false
}
