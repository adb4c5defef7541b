package ident

import (
	"sort"
	"testing"
	"time"
)

func TestNewSortsByCreation(t *testing.T) {
	ids := make([]string, 5000)
	for i := range ids {
		ids[i] = New("asst")
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids made in sequence do not sort in creation order")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if !Valid("asst", id) {
			t.Fatalf("Valid(%q) = false, want true", id)
		}
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		prefix, id string
		want       bool
	}{
		{"line", New("line"), true},
		{"asst", New("line"), false},
		{"asst", "asst_short", false},
		{"asst", "asst_01234567890123456789abcdeU", false},
	} {
		if got := Valid(tc.prefix, tc.id); got != tc.want {
			t.Errorf("Valid(%q, %q) = %v, want %v", tc.prefix, tc.id, got, tc.want)
		}
	}
}

func TestFloorCeil(t *testing.T) {
	before := time.Now().Add(-time.Millisecond)
	id := New("call")
	after := time.Now().Add(time.Millisecond)
	at, ok := Time("call", id)
	if !ok {
		t.Fatalf("Time(%q) not ok", id)
	}
	for _, tc := range []struct {
		name   string
		lo, hi time.Time
		want   bool
	}{
		{"around", before, after, true},
		{"its millisecond", at, at, true},
		{"from the next millisecond", at.Add(time.Millisecond), after, false},
		{"up to the millisecond before", before.Add(-time.Hour), at.Add(-time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := Floor("call", tc.lo), Ceil("call", tc.hi)
			if !Valid("call", lo) || !Valid("call", hi) {
				t.Fatalf("Floor/Ceil = %q, %q: not valid ids", lo, hi)
			}
			if got := lo <= id && id <= hi; got != tc.want {
				t.Errorf("%q <= %q <= %q = %v, want %v", lo, id, hi, got, tc.want)
			}
		})
	}
	if got, _ := Time("call", Floor("call", at)); !got.Equal(at) {
		t.Errorf("Time(Floor(%v)) = %v", at, got)
	}
}

func TestDerived(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123)
	a := Derived("evt", at, "call_1#3")
	if a != Derived("evt", at, "call_1#3") {
		t.Fatal("Derived is not stable")
	}
	if a == Derived("evt", at, "call_1#4") || a == Derived("evt", at.Add(time.Millisecond), "call_1#3") {
		t.Fatal("Derived gave one id for two keys or two times")
	}
	if !Valid("evt", a) {
		t.Fatalf("Derived = %q, not a valid id", a)
	}
	if got, _ := Time("evt", a); !got.Equal(at) {
		t.Errorf("Time(Derived) = %v, want %v", got, at)
	}
}

func TestNumbered(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123)
	prev := ""
	for _, n := range []uint32{0, 1, 2, 31, 32, 1023, 1024, 99_999, 100_000, 1 << 31} {
		id := Numbered("rcp", at, "cmp_1", n)
		if !Valid("rcp", id) {
			t.Fatalf("Numbered(%d) = %q, not a valid id", n, id)
		}
		if id <= prev {
			t.Fatalf("Numbered(%d) = %q sorts at or before %q", n, id, prev)
		}
		if id != Numbered("rcp", at, "cmp_1", n) {
			t.Fatalf("Numbered(%d) is not stable", n)
		}
		if id == Numbered("rcp", at, "cmp_2", n) {
			t.Fatalf("Numbered(%d) gave two lists one id", n)
		}
		prev = id
	}
	if got, _ := Time("rcp", prev); !got.Equal(at) {
		t.Errorf("Time(Numbered) = %v, want %v", got, at)
	}
}
