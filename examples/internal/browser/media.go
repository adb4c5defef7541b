package browser

import (
	"encoding/json"
	"time"
)

// RemoteMedia is what a page receives from the other participants of its LiveKit room:
// the size its video element shows, and, from each remote track's own WebRTC statistics
// (inbound-rtp), the video frames decoded and the audio's total energy.
type RemoteMedia struct {
	Width         int     `json:"width"`
	Height        int     `json:"height"`
	FramesDecoded int     `json:"framesDecoded"`
	AudioEnergy   float64 `json:"audioEnergy"`
}

// RemoteMediaJS is a JavaScript expression whose value is a promise of the page's
// RemoteMedia. room is an expression for the page's livekit-client Room (null or
// undefined before it joins: nothing received); video is the CSS selector of the video
// element showing the other party ("" when the page has none: no size).
func RemoteMediaJS(room, video string) string {
	sel, _ := json.Marshal(video)
	return `(async () => {
  const room = ` + room + `;
  const sel = ` + string(sel) + `;
  const v = sel ? document.querySelector(sel) : null;
  const out = { width: v ? v.videoWidth : 0, height: v ? v.videoHeight : 0, framesDecoded: 0, audioEnergy: 0 };
  if (!room) return out;
  for (const p of room.remoteParticipants.values()) {
    for (const pub of p.trackPublications.values()) {
      if (!pub.track) continue;
      const r = await pub.track.getRTCStatsReport();
      if (!r) continue;
      r.forEach((s) => {
        if (s.type !== 'inbound-rtp') return;
        if (s.kind === 'video') out.framesDecoded += s.framesDecoded || 0;
        if (s.kind === 'audio') out.audioEnergy += s.totalAudioEnergy || 0;
      });
    }
  }
  return out;
})()`
}

// RemoteMedia reads the page's RemoteMedia once (RemoteMediaJS).
func (p *Page) RemoteMedia(room, video string) RemoteMedia {
	p.t.Helper()
	var m RemoteMedia
	p.Eval(RemoteMediaJS(room, video), &m)
	return m
}

// WaitForRemoteMedia waits, as WaitFor, until cond holds of the page's RemoteMedia and
// returns it. cond is a JavaScript expression over m, the RemoteMedia as RemoteMediaJS
// makes it (m.width, m.height, m.framesDecoded, m.audioEnergy), and may name anything
// else of the page.
func (p *Page) WaitForRemoteMedia(what, room, video, cond string, limit time.Duration) RemoteMedia {
	p.t.Helper()
	var m RemoteMedia
	p.WaitFor(what, `(async () => {
  const m = await (`+RemoteMediaJS(room, video)+`);
  return (`+cond+`) && m;
})()`, limit, &m)
	return m
}
