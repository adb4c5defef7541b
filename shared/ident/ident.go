// Package ident makes Bridgeline's resource identifiers: a type prefix and 26 characters
// of Crockford base32 holding a 48-bit millisecond timestamp and 80 random bits, so ids
// sort by creation time as strings and cannot be guessed.
package ident

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

var (
	mu       sync.Mutex
	lastMS   uint64
	lastRand [10]byte
)

// New returns a fresh id such as "asst_01jd3...". Ids made in the same millisecond by one
// process still sort in creation order: the random part is incremented instead of redrawn.
func New(prefix string) string {
	ms := uint64(time.Now().UnixMilli())
	var r [10]byte
	mu.Lock()
	if ms <= lastMS {
		ms = lastMS
		r = lastRand
		for i := len(r) - 1; i >= 0; i-- {
			r[i]++
			if r[i] != 0 {
				break
			}
		}
	} else {
		if _, err := rand.Read(r[:]); err != nil {
			panic("ident: crypto/rand failed: " + err.Error())
		}
	}
	lastMS, lastRand = ms, r
	mu.Unlock()

	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], ms<<16)
	copy(raw[6:], r[:])
	return prefix + "_" + encode(raw)
}

// encode writes 128 bits as 26 base32 characters, most significant first.
func encode(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// Valid reports whether s looks like an id with the given prefix.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(rest) != 26 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(alphabet, rest[i]) < 0 {
			return false
		}
	}
	return true
}

// Floor returns the lowest id with the given prefix that New could make at t's
// millisecond or later: every id made at or after t sorts at or above it. With Ceil it
// turns a creation-time range into an id range, so a list filtered by creation time is a
// key range on the same sort key that orders it.
func Floor(prefix string, t time.Time) string {
	return bound(prefix, t, 0)
}

// Ceil returns the highest id with the given prefix that New could make at t's
// millisecond: every id made at or before t sorts at or below it.
func Ceil(prefix string, t time.Time) string {
	return bound(prefix, t, 0xff)
}

func bound(prefix string, t time.Time, fill byte) string {
	ms := max(t.UnixMilli(), 0)
	var raw [16]byte
	for i := 6; i < 16; i++ {
		raw[i] = fill
	}
	binary.BigEndian.PutUint64(raw[:8], uint64(ms)<<16|binary.BigEndian.Uint64(raw[:8])&0xffff)
	return prefix + "_" + encode(raw)
}

// Time returns the creation time an id carries (to the millisecond), and whether id has
// the given prefix and a valid form.
func Time(prefix, id string) (time.Time, bool) {
	if !Valid(prefix, id) {
		return time.Time{}, false
	}
	rest := id[len(prefix)+1:]
	var hi, lo uint64
	for i := 0; i < len(rest); i++ {
		v := uint64(strings.IndexByte(alphabet, rest[i]))
		hi = hi<<5 | lo>>59
		lo = lo<<5 | v
	}
	// 26 characters hold 130 bits; the top two are zero for every id New makes.
	return time.UnixMilli(int64(hi >> 16)), true
}

// Derived returns an id with t's millisecond and 80 bits of key's SHA-256 in place of the
// random part: the same key at the same time always gives the same id, so a retried
// write of one thing (a worker's report, delivered twice) finds its own first write
// instead of adding a second. Keys must name what they stand for uniquely (a call's id
// and a sequence number); such ids sort by t like any other.
func Derived(prefix string, t time.Time, key string) string {
	sum := sha256.Sum256([]byte(prefix + "\x00" + key))
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(max(t.UnixMilli(), 0))<<16)
	copy(raw[6:], sum[:10])
	return prefix + "_" + encode(raw)
}

// Numbered returns the id of the n-th member of a list: t's millisecond, 48 bits of
// key's SHA-256 (key names the list uniquely, such as its owner's id), and n, so the
// members of one list sort by n and the same n always gives the same id (an upload
// written twice lands on itself).
func Numbered(prefix string, t time.Time, key string, n uint32) string {
	sum := sha256.Sum256([]byte(prefix + "\x00" + key))
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(max(t.UnixMilli(), 0))<<16)
	copy(raw[6:12], sum[:6])
	binary.BigEndian.PutUint32(raw[12:], n)
	return prefix + "_" + encode(raw)
}
