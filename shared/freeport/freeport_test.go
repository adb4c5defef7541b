package freeport

import (
	"maps"
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
	forgetAfter(t)
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

// TestFindBlockReservesTheWholeBlock: no port found after a block falls inside it, and
// no block overlaps a port found before.
func TestFindBlockReservesTheWholeBlock(t *testing.T) {
	forgetAfter(t)
	taken := map[int]bool{}
	for range 10 {
		p, err := FindBlock(40, func(int) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		for q := p; q < p+40; q++ {
			if taken[q] || q >= Hi {
				t.Fatalf("block %d-%d holds port %d, handed out before or past the range", p, p+39, q)
			}
			taken[q] = true
		}
		one, err := Find(func(int) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if taken[one] {
			t.Fatalf("port %d found inside a block", one)
		}
		taken[one] = true
	}
}

// forgetAfter gives the ports the test is handed out back when it ends: a test that
// draws hundreds would otherwise leave later ones (-count) too few free blocks.
func forgetAfter(t *testing.T) {
	givenMu.Lock()
	before := maps.Clone(given)
	givenMu.Unlock()
	t.Cleanup(func() {
		givenMu.Lock()
		given = before
		givenMu.Unlock()
	})
}
