// Package egresstest resolves host names to chosen addresses through the real Go
// resolver, for the tests of every layer that applies the egress policy at dial time
// (webhook deliveries, tool calls): a name that resolves to an internal address must be
// refused before a connection is made, and no /etc/hosts entry is needed for it.
package egresstest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is an authoritative DNS server on 127.0.0.1 (UDP) that answers A and AAAA
// queries from a fixed table, so a name can resolve to an internal address through the
// real Go resolver, without /etc/hosts.
type DNS struct {
	conn  net.PacketConn
	names map[string]netip.Addr // fully qualified, lower case
}

// StartDNS serves names (fully qualified, lower case: "tools.example.test.") until the
// test ends.
func StartDNS(t testing.TB, names map[string]netip.Addr) *DNS {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &DNS{conn: c, names: names}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve()
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return s
}

func (s *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		addr, ok := s.names[strings.ToLower(q.Name.String())]
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
		switch {
		case ok && q.Type == dnsmessage.TypeA && addr.Is4():
			_ = b.AResource(rh, dnsmessage.AResource{A: addr.As4()})
		case ok && q.Type == dnsmessage.TypeAAAA && !addr.Is4():
			_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: addr.As16()})
		}
		msg, err := b.Finish()
		if err != nil {
			continue
		}
		_, _ = s.conn.WriteTo(msg, from)
	}
}

// Resolver is a Go resolver that asks only this server.
func (s *DNS) Resolver() *net.Resolver {
	addr := s.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}
