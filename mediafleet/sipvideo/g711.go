package sipvideo

// G.711 (ITU-T), the phone side's audio: µ-law (PCMU) and A-law (PCMA), 8 kHz.

const ulawBias = 0x84

func ulawEncode(s int16) byte {
	v := int(s)
	sign := 0
	if v < 0 {
		v, sign = -v, 0x80
	}
	if v > 32635 {
		v = 32635
	}
	v += ulawBias
	exp := 7
	for mask := 0x4000; v&mask == 0 && exp > 0; mask >>= 1 {
		exp--
	}
	mant := (v >> (exp + 3)) & 0x0f
	return ^byte(sign | exp<<4 | mant)
}

func ulawDecode(b byte) int16 {
	b = ^b
	exp := int(b>>4) & 0x07
	v := ((int(b&0x0f) << 3) + ulawBias) << exp
	v -= ulawBias
	if b&0x80 != 0 {
		return int16(-v)
	}
	return int16(v)
}

func alawEncode(s int16) byte {
	v := int(s)
	sign := 0x80
	if v < 0 {
		v, sign = -v-1, 0
	}
	if v > 32767 {
		v = 32767
	}
	var b int
	if v < 256 {
		b = v >> 4
	} else {
		exp := 1
		for x := v >> 8; x > 1; x >>= 1 {
			exp++
		}
		b = exp<<4 | (v>>(exp+3))&0x0f
	}
	return byte(b|sign) ^ 0x55
}

func alawDecode(b byte) int16 {
	b ^= 0x55
	exp := int(b>>4) & 0x07
	mant := int(b & 0x0f)
	var v int
	if exp == 0 {
		v = mant<<4 + 8
	} else {
		v = (mant<<4 + 0x108) << (exp - 1)
	}
	if b&0x80 == 0 {
		return int16(-v)
	}
	return int16(v)
}

// g711 is one of the two laws.
type g711 struct {
	enc func(int16) byte
	dec func(byte) int16
}

func lawOf(pt uint8) g711 {
	if pt == ptPCMA {
		return g711{alawEncode, alawDecode}
	}
	return g711{ulawEncode, ulawDecode}
}
