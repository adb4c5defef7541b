package tts

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DecodeWAV reads a 16-bit mono PCM WAV file: what flite and espeak-ng write and what
// hosted speech APIs return. A streaming writer's placeholder data size (0, or larger
// than the file) means the samples run to the end of the file.
func DecodeWAV(b []byte) (PCM, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return PCM{}, errors.New("not a WAV file")
	}
	var rate, channels, bits int
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if body+16 > len(b) {
				return PCM{}, errors.New("WAV: short fmt chunk")
			}
			channels = int(binary.LittleEndian.Uint16(b[body+2:]))
			rate = int(binary.LittleEndian.Uint32(b[body+4:]))
			bits = int(binary.LittleEndian.Uint16(b[body+14:]))
		case "data":
			if channels != 1 || bits != 16 || rate <= 0 {
				return PCM{}, fmt.Errorf("WAV is %d ch %d bit %d Hz, want mono 16 bit", channels, bits, rate)
			}
			data := b[body:]
			if size > 0 && size < len(data) {
				data = data[:size]
			}
			pcm := make([]int16, len(data)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
			}
			return PCM{Rate: rate, Samples: pcm}, nil
		}
		if size < 0 || body+size > len(b) {
			break
		}
		off = body + size + size%2
	}
	return PCM{}, errors.New("WAV has no data chunk")
}

// EncodeWAV wraps mono 16-bit PCM in a WAV file.
func EncodeWAV(p PCM) []byte {
	b := make([]byte, 44+2*len(p.Samples))
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*len(p.Samples)))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(p.Rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(2*p.Rate))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*len(p.Samples)))
	for i, s := range p.Samples {
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(s))
	}
	return b
}
