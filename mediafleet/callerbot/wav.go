package callerbot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// decodeWAV reads a 16-bit mono WAV file (what flite writes).
func decodeWAV(b []byte) (tts.PCM, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return tts.PCM{}, errors.New("not a WAV file")
	}
	var rate, channels, bits int
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if body+16 > len(b) {
				return tts.PCM{}, errors.New("WAV: short fmt chunk")
			}
			channels = int(binary.LittleEndian.Uint16(b[body+2:]))
			rate = int(binary.LittleEndian.Uint32(b[body+4:]))
			bits = int(binary.LittleEndian.Uint16(b[body+14:]))
		case "data":
			if channels != 1 || bits != 16 || rate == 0 {
				return tts.PCM{}, fmt.Errorf("WAV is %d ch %d bit %d Hz, want mono 16 bit", channels, bits, rate)
			}
			data := b[body:]
			if size < len(data) {
				data = data[:size]
			}
			pcm := make([]int16, len(data)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
			}
			return tts.PCM{Rate: rate, Samples: pcm}, nil
		}
		if size < 0 || body+size > len(b) {
			break
		}
		off = body + size + size%2
	}
	return tts.PCM{}, errors.New("WAV has no data chunk")
}

// encodeWAV wraps mono 16-bit PCM in a WAV file.
func encodeWAV(p tts.PCM) []byte {
	var b bytes.Buffer
	data := len(p.Samples) * 2
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+data))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(p.Rate), uint32(p.Rate * 2), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(data))
	_ = binary.Write(&b, binary.LittleEndian, p.Samples)
	return b.Bytes()
}
