package recording

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Ogg framing (RFC 3533) of an Opus stream (RFC 7845): the identification header and the
// comment header each on a page of their own, then the audio packets, several a page,
// each page's granule position the 48 kHz sample count at the end of its last packet
// (pre-skip included), the last page flagged end of stream.

const (
	pageBOS = 0x02
	pageEOS = 0x04
	// packetsPerPage: a page a second of 20 ms packets, 28 bytes of page header a second
	// beside the audio, and a file a player can seek to the second.
	packetsPerPage = 50
)

var crcTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggCRC(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>24)^x]
	}
	return c
}

// oggWriter writes one logical Opus stream.
type oggWriter struct {
	w       io.Writer
	serial  uint32
	seq     uint32
	packets [][]byte
	granule uint64
	n       int64 // bytes written
}

// opusHead is the identification header of two uncoupled mono streams: channel mapping
// family 1, stream count 2, coupled count 0, channel i from stream i.
func opusHead(preSkip, inputRate int) []byte {
	h := make([]byte, 23)
	copy(h, "OpusHead")
	h[8] = 1
	h[9] = 2
	h[18], h[19], h[20], h[21], h[22] = 1, 2, 0, 0, 1
	binary.LittleEndian.PutUint16(h[10:], uint16(preSkip))
	binary.LittleEndian.PutUint32(h[12:], uint32(inputRate))
	return h
}

func opusTags(vendor string) []byte {
	t := make([]byte, 8+4+len(vendor)+4)
	copy(t, "OpusTags")
	binary.LittleEndian.PutUint32(t[8:], uint32(len(vendor)))
	copy(t[12:], vendor)
	return t
}

func newOggWriter(w io.Writer, serial uint32, head []byte) (*oggWriter, error) {
	o := &oggWriter{w: w, serial: serial}
	if err := o.page([][]byte{head}, pageBOS, 0); err != nil {
		return nil, err
	}
	if err := o.page([][]byte{opusTags("bridgeline")}, 0, 0); err != nil {
		return nil, err
	}
	return o, nil
}

// packet adds one audio packet of samples48 samples (at 48 kHz, per channel).
func (o *oggWriter) packet(p []byte, samples48 int) error {
	o.packets = append(o.packets, append([]byte(nil), p...))
	o.granule += uint64(samples48)
	if len(o.packets) < packetsPerPage {
		return nil
	}
	err := o.page(o.packets, 0, o.granule)
	o.packets = o.packets[:0]
	return err
}

// close writes the packets still held on the last page, flagged end of stream.
func (o *oggWriter) close() error {
	return o.page(o.packets, pageEOS, o.granule)
}

func (o *oggWriter) page(packets [][]byte, flags byte, granule uint64) error {
	var lacing []byte
	size := 0
	for _, p := range packets {
		for n := len(p); ; n -= 255 {
			if n < 255 {
				lacing = append(lacing, byte(n))
				break
			}
			lacing = append(lacing, 255)
		}
		size += len(p)
	}
	if len(lacing) > 255 {
		return errors.New("ogg: too many segments for one page")
	}
	b := make([]byte, 27+len(lacing), 27+len(lacing)+size)
	copy(b, "OggS")
	b[5] = flags
	binary.LittleEndian.PutUint64(b[6:], granule)
	binary.LittleEndian.PutUint32(b[14:], o.serial)
	binary.LittleEndian.PutUint32(b[18:], o.seq)
	b[26] = byte(len(lacing))
	copy(b[27:], lacing)
	for _, p := range packets {
		b = append(b, p...)
	}
	binary.LittleEndian.PutUint32(b[22:], oggCRC(b))
	o.seq++
	n, err := o.w.Write(b)
	o.n += int64(n)
	return err
}

// readOgg returns the packets of the first logical stream of an Ogg file, its header
// packets included, checking every page's CRC.
func readOgg(r io.Reader) ([][]byte, error) {
	br := bufio.NewReader(r)
	var packets [][]byte
	var partial []byte
	for {
		hdr := make([]byte, 27)
		if _, err := io.ReadFull(br, hdr); err != nil {
			if errors.Is(err, io.EOF) && len(packets) > 0 {
				return packets, nil
			}
			return nil, fmt.Errorf("ogg: page header: %w", err)
		}
		if string(hdr[:4]) != "OggS" {
			return nil, errors.New("ogg: no page signature")
		}
		lacing := make([]byte, hdr[26])
		if _, err := io.ReadFull(br, lacing); err != nil {
			return nil, fmt.Errorf("ogg: lacing: %w", err)
		}
		size := 0
		for _, l := range lacing {
			size += int(l)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(br, body); err != nil {
			return nil, fmt.Errorf("ogg: page body: %w", err)
		}
		want := binary.LittleEndian.Uint32(hdr[22:])
		binary.LittleEndian.PutUint32(hdr[22:], 0)
		if got := oggCRC(append(append(hdr, lacing...), body...)); got != want {
			return nil, fmt.Errorf("ogg: page %d: bad CRC", binary.LittleEndian.Uint32(hdr[18:]))
		}
		for _, l := range lacing {
			partial = append(partial, body[:l]...)
			body = body[l:]
			if l < 255 {
				packets = append(packets, partial)
				partial = nil
			}
		}
		if hdr[5]&pageEOS != 0 {
			return packets, nil
		}
	}
}
