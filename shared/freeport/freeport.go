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
	"math/rand/v2"
	"net"
	"strconv"
)

// Lo and Hi bound the ports found: Lo up to Hi-1.
const Lo, Hi = 20000, 32768

// TCP is a TCP port free on host, and on every interface, now (the listeners that found
// it are closed).
func TCP(host string) (int, error) {
	return find("tcp", func(p int) bool { return tcpFree(host, p) })
}

// UDP is a UDP port free on host, and on every interface, now.
func UDP(host string) (int, error) {
	return find("udp", func(p int) bool { return udpFree(host, p) })
}

func tcpFree(host string, p int) bool {
	for _, h := range []string{host, ""} {
		l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

func udpFree(host string, p int) bool {
	for _, h := range []string{host, ""} {
		c, err := net.ListenPacket("udp", net.JoinHostPort(h, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// find tries random ports of the range until free says one is.
func find(network string, free func(port int) bool) (int, error) {
	for range 100 {
		if p := Lo + rand.IntN(Hi-Lo); free(p) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("freeport: no %s port free in %d-%d", network, Lo, Hi-1)
}
