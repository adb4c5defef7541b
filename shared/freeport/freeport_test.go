package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortsAreNotEphemeral: ports found free come from below Linux's ephemeral range
// (which outgoing connections take before a server binds), and one in use is not free.
func TestFreePortsAreNotEphemeral(t *testing.T) {
	for range 20 {
		for network, find := range map[string]func(string) (int, error){"tcp": TCP, "udp": UDP} {
			p, err := find("127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			if p < Lo || p >= Hi {
				t.Fatalf("%s port %d, want one in %d-%d", network, p, Lo, Hi-1)
			}
		}
	}
	p, err := TCP("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(p)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if TCPFree("127.0.0.1", p) {
		t.Errorf("port %d, listened on every interface, found free on 127.0.0.1", p)
	}
	c, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if UDPFree("127.0.0.1", p) {
		t.Errorf("udp port %d in use found free", p)
	}
}

// TestFindNeverGivesAPortTwice: ports found one after another differ, though each was
// free when found (500 draws from the range would repeat one about ten times over).
func TestFindNeverGivesAPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p, err := Find(func(int) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d found twice", p)
		}
		seen[p] = true
	}
}
