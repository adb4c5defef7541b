package pipeline

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"log/slog"
	"sync"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/livekit/server-sdk-go/v2/pkg/samplebuilder"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
	xdraw "golang.org/x/image/draw"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A version's vision shows the model the caller's camera or shared screen (speech.Viewer).
// The worker subscribes to the caller's video tracks of those sources and keeps, per
// source, a still of the latest key frame: VP8 inter frames need every frame before
// them, so rather than decode the whole stream the worker decodes only key frames, and
// asks the caller's client for one (a PLI) when the conversation wants a fresh still: at
// the caller's speech onset, and when the model calls look. A client answers within a
// round trip and a frame interval. Each still is scaled to at most
// speech.MaxPictureSide on its long side and encoded as JPEG; stills live in memory for
// the call only, the latest per source, and are never written anywhere.

const (
	// stillQuality is the stills' JPEG quality: a 768-pixel still of a camera is then
	// 30-80 KB, a few hundred milliseconds of upload to a model at most.
	stillQuality = 80
	// stillEvery is how often a key frame nobody asked for (a client's periodic one)
	// is decoded: the latest still stays fresh without decoding every key frame.
	stillEvery = 2 * time.Second
	// refreshEvery bounds the key frame requests: every caller onset asks, and a PLI
	// makes the client send a larger frame to every subscriber.
	refreshEvery = 500 * time.Millisecond
)

// viewer keeps the latest still of each of the caller's video sources a version shows.
type viewer struct {
	camera, screen bool
	log            *slog.Logger

	mu      sync.Mutex
	sources map[string]*videoSource // by speech.PictureCamera, speech.PictureScreen
	// changed is closed (and replaced) when a still or a source comes or goes.
	changed chan struct{}
}

// videoSource is one of the caller's video tracks being watched.
type videoSource struct {
	pli         func() // asks the caller's client for a key frame
	latest      *speech.Picture
	wanted      bool      // a fresh still was asked for and none came since
	lastRefresh time.Time // when a key frame was last asked for
}

// newViewer is the viewer of a version's vision mode; nil when it shows nothing.
func newViewer(mode string, log *slog.Logger) *viewer {
	camera, screen := persona.VisionSources(mode)
	if !camera && !screen {
		return nil
	}
	return &viewer{camera: camera, screen: screen, log: log, sources: map[string]*videoSource{}, changed: make(chan struct{})}
}

// sourceOf is the picture source a track of the caller shows, "" when the version does
// not show it.
func (v *viewer) sourceOf(s livekit.TrackSource) string {
	switch {
	case v == nil:
		return ""
	case s == livekit.TrackSource_CAMERA && v.camera:
		return speech.PictureCamera
	case s == livekit.TrackSource_SCREEN_SHARE && v.screen:
		return speech.PictureScreen
	}
	return ""
}

// notifyLocked wakes those waiting in Pictures; v.mu held.
func (v *viewer) notifyLocked() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// watch keeps the stills of track, the caller's video of source, until it ends (the
// caller stopped sharing, or left). A newer track of the same source replaces it.
func (v *viewer) watch(track *webrtc.TrackRemote, source string, rp *lksdk.RemoteParticipant) {
	if track.Codec().MimeType != webrtc.MimeTypeVP8 {
		v.log.Warn("caller video is not VP8; the model will not see it", "source", source, "codec", track.Codec().MimeType)
		return
	}
	dec, err := vp8.NewDecoder()
	if err != nil {
		v.log.Warn("no VP8 decoder for the caller's video", "err", err)
		return
	}
	defer dec.Close()
	src := v.add(source, func() { rp.WritePLI(track.SSRC()) })
	defer v.remove(source, src)
	sb := samplebuilder.New(256, &codecs.VP8Packet{}, track.Codec().ClockRate)
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			return
		}
		sb.Push(pkt)
		for s := sb.Pop(); s != nil; s = sb.Pop() {
			v.frame(src, source, dec, s.Data)
		}
	}
}

// add starts watching a source, whose client pli asks for a key frame, and asks for
// one: the first still.
func (v *viewer) add(source string, pli func()) *videoSource {
	src := &videoSource{pli: pli}
	v.mu.Lock()
	v.sources[source] = src
	v.notifyLocked()
	v.mu.Unlock()
	v.refresh(src, time.Now())
	return src
}

// remove stops watching src: the caller shows nothing of source now, so no stale still
// of it is given. A newer track of the source stays.
func (v *viewer) remove(source string, src *videoSource) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.sources[source] == src {
		delete(v.sources, source)
		v.notifyLocked()
	}
}

// frame takes one reassembled VP8 frame of src: a key frame, when a still is due (one
// was asked for, there is none, or the latest is stillEvery old), becomes the latest
// still; any other frame is skipped.
func (v *viewer) frame(src *videoSource, source string, dec *vp8.Decoder, data []byte) {
	// A VP8 frame's first bit is 0 on key frames, the only frames that decode on their
	// own.
	if len(data) == 0 || data[0]&0x01 != 0 {
		return
	}
	v.mu.Lock()
	due := src.wanted || src.latest == nil || time.Since(src.latest.At) >= stillEvery
	v.mu.Unlock()
	if !due {
		return
	}
	at := time.Now()
	img, err := dec.Decode(data)
	if err != nil || img == nil {
		return
	}
	jpg, err := stillJPEG(img)
	if err != nil {
		v.log.Warn("caller still not encoded", "err", err)
		return
	}
	v.mu.Lock()
	src.latest = &speech.Picture{Source: source, JPEG: jpg, At: at}
	src.wanted = false
	v.notifyLocked()
	v.mu.Unlock()
}

// refresh asks src's client for a key frame, at most every refreshEvery.
func (v *viewer) refresh(src *videoSource, now time.Time) {
	v.mu.Lock()
	src.wanted = true
	ask := now.Sub(src.lastRefresh) >= refreshEvery
	if ask {
		src.lastRefresh = now
	}
	v.mu.Unlock()
	if ask {
		src.pli()
	}
}

// Refresh asks every watched source for a fresh key frame (speech.Viewer).
func (v *viewer) Refresh() {
	if v == nil {
		return
	}
	v.mu.Lock()
	srcs := make([]*videoSource, 0, len(v.sources))
	for _, s := range v.sources {
		srcs = append(srcs, s)
	}
	v.mu.Unlock()
	now := time.Now()
	for _, s := range srcs {
		v.refresh(s, now)
	}
}

// Pictures returns the latest still of each watched source, waiting until ctx ends for
// those older than since (speech.Viewer). Without a watched source it returns at once.
func (v *viewer) Pictures(ctx context.Context, since time.Time) []speech.Picture {
	if v == nil {
		return nil
	}
	for {
		v.mu.Lock()
		var out []speech.Picture
		fresh := true
		for _, name := range []string{speech.PictureCamera, speech.PictureScreen} {
			s := v.sources[name]
			if s == nil {
				continue
			}
			if s.latest == nil || s.latest.At.Before(since) {
				fresh = false
			}
			if s.latest != nil {
				out = append(out, *s.latest)
			}
		}
		changed := v.changed
		v.mu.Unlock()
		if fresh {
			return out
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return out
		}
	}
}

// stillJPEG is img as the model gets it: scaled down (never up) to at most
// speech.MaxPictureSide pixels on its long side, as JPEG.
func stillJPEG(img image.Image) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if long := max(w, h); long > speech.MaxPictureSide {
		w, h = max(1, w*speech.MaxPictureSide/long), max(1, h*speech.MaxPictureSide/long)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
		img = dst
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: stillQuality}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
