package tts

import (
	"encoding/binary"
	"slices"
	"testing"
)

func TestWAVRoundTrip(t *testing.T) {
	in := PCM{Rate: 16000, Samples: []int16{0, 1, -1, 32767, -32768, 1234}}
	got, err := DecodeWAV(EncodeWAV(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.Rate != in.Rate || !slices.Equal(got.Samples, in.Samples) {
		t.Errorf("DecodeWAV(EncodeWAV(%v)) = %v", in, got)
	}
}

// A streaming writer (espeak-ng --stdout) cannot know the sizes: the data runs to the end.
func TestWAVStreamedSizes(t *testing.T) {
	b := EncodeWAV(PCM{Rate: 22050, Samples: []int16{5, 6, 7}})
	binary.LittleEndian.PutUint32(b[40:], 0)
	got, err := DecodeWAV(b)
	if err != nil || len(got.Samples) != 3 {
		t.Errorf("placeholder size: %v, %v; want 3 samples", got, err)
	}
	binary.LittleEndian.PutUint32(b[40:], 0xfffffff0)
	if got, err := DecodeWAV(b); err != nil || len(got.Samples) != 3 {
		t.Errorf("oversized size: %v, %v; want 3 samples", got, err)
	}
}

func TestWAVRefusals(t *testing.T) {
	stereo := EncodeWAV(PCM{Rate: 8000, Samples: []int16{1, 2}})
	binary.LittleEndian.PutUint16(stereo[22:], 2)
	for name, b := range map[string][]byte{
		"not RIFF": []byte("hello world, not a wav"),
		"stereo":   stereo,
		"no data":  EncodeWAV(PCM{Rate: 8000})[:36],
	} {
		if _, err := DecodeWAV(b); err == nil {
			t.Errorf("DecodeWAV(%s) = nil error", name)
		}
	}
}
