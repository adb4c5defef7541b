// The "call us" page. A click asks our backend for a call (POST /api/call), which asks
// Bridgeline for a hosted session and passes on only what joining needs: rtc_url,
// participant_token, expires_at and session_id. The page joins that one room with the
// LiveKit browser SDK, publishes camera and microphone, and shows and meters the other
// party. Hang up asks the backend to end the session (POST /api/hangup); the room closing
// from the other side (they hung up, or the session was deleted) ends the call here too.
// window.callUs holds the state for whoever wants to look (tests do).
'use strict';

(() => {
  const LK = window.LivekitClient;
  const $ = (id) => document.getElementById(id);
  const state = { session: null, room: null, audio: null, level: 0, peak: 0, ended: null, disconnectReason: null };
  window.callUs = state;

  function setState(name, text) {
    document.body.dataset.state = name;
    $('status').textContent = text;
  }

  async function post(path, body) {
    const r = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body || {}),
    });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || `${path}: ${r.status}`);
    return j;
  }

  // A LiveKit server on this machine (the local stack) hands out loopback candidates and
  // needs no STUN; elsewhere the servers LiveKit suggests are used.
  function rtcConfigFor(url) {
    const host = new URL(url).hostname;
    return ['127.0.0.1', 'localhost', '[::1]'].includes(host) ? { iceServers: [] } : undefined;
  }

  // meter follows the other party's audio: level is the RMS of the last 20 ms or so,
  // peak the highest level of the call.
  function meter(mediaStreamTrack) {
    const ctx = state.audio;
    ctx.resume();
    const an = ctx.createAnalyser();
    an.fftSize = 1024;
    ctx.createMediaStreamSource(new MediaStream([mediaStreamTrack])).connect(an);
    const buf = new Float32Array(an.fftSize);
    const timer = setInterval(() => {
      if (!state.room) {
        clearInterval(timer);
        return;
      }
      an.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      state.level = Math.sqrt(sum / buf.length);
      state.peak = Math.max(state.peak, state.level);
      $('level').style.width = `${Math.min(100, Math.round(state.level * 400))}%`;
    }, 50);
  }

  function onTrack(track) {
    if (track.kind === 'video') {
      track.attach($('remote-video'));
    } else if (track.kind === 'audio') {
      $('audio-sink').appendChild(track.attach());
      meter(track.mediaStreamTrack);
    }
  }

  function finish(text, failed) {
    if (state.ended) return;
    state.ended = text;
    const room = state.room;
    state.room = null;
    if (room) room.disconnect();
    delete $('self-view').dataset.live;
    $('remote-video').srcObject = null;
    $('audio-sink').replaceChildren();
    $('level').style.width = '0';
    $('call').disabled = false;
    $('hangup').disabled = true;
    setState(failed ? 'failed' : 'ended', text);
  }

  $('call').addEventListener('click', async () => {
    if (!LK) {
      setState('failed', 'The LiveKit client SDK did not load.');
      return;
    }
    // Made inside the click, so the browser lets it play.
    state.audio = state.audio || new AudioContext();
    Object.assign(state, { session: null, room: null, level: 0, peak: 0, ended: null, disconnectReason: null, hangingUp: false });
    $('call').disabled = true;
    $('hangup').disabled = false;
    setState('calling', 'Calling…');
    try {
      const session = await post('/api/call');
      state.session = session;
      const room = new LK.Room({ adaptiveStream: false, dynacast: false });
      state.room = room;
      room
        .on(LK.RoomEvent.TrackSubscribed, onTrack)
        .on(LK.RoomEvent.TrackUnsubscribed, (track) => track.detach())
        .on(LK.RoomEvent.Disconnected, (reason) => {
          state.disconnectReason = LK.DisconnectReason[reason] || String(reason);
          finish(state.hangingUp ? 'You hung up.' : 'The call ended.');
        });
      await room.connect(session.rtc_url, session.participant_token, { rtcConfig: rtcConfigFor(session.rtc_url) });
      await room.startAudio();
      await room.localParticipant.enableCameraAndMicrophone();
      const cam = room.localParticipant.getTrackPublication(LK.Track.Source.Camera);
      if (cam && cam.track) {
        cam.track.attach($('self-view'));
        $('self-view').dataset.live = '1';
      }
      if (!state.ended) setState('connected', 'You are connected.');
    } catch (err) {
      finish(`The call could not start: ${err.message}`, true);
    }
  });

  $('hangup').addEventListener('click', async () => {
    const session = state.session;
    state.hangingUp = true;
    try {
      if (session) await post('/api/hangup', { session_id: session.session_id });
    } catch (err) {
      // The room closing below ends the session anyway (the client left).
    } finally {
      finish('You hung up.');
    }
  });
})();
