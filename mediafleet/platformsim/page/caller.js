// The sim's browser caller: places an inbound call with party "browser", waits for the
// line to answer (the sim call then carries the room), joins the room as the platform
// participant with the camera and microphone, shows and meters what the line sends, and
// hangs up. window.simCaller holds the state for whoever wants to look (tests do).
'use strict';

(() => {
  const LK = window.LivekitClient;
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const state = { call: null, room: null, audio: null, level: 0, peak: 0, ended: null };
  window.simCaller = state;

  function setState(name, text) {
    document.body.dataset.state = name;
    $('status').textContent = text;
  }

  function final(call) {
    return call.status !== 'ringing' && call.status !== 'answered';
  }

  async function api(method, path, body) {
    const r = await fetch(path, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((j.error && j.error.message) || `${method} ${path}: ${r.status}`);
    return j;
  }

  // A LiveKit server on this machine hands out loopback candidates and needs no STUN;
  // without this the browser would ask the STUN servers LiveKit lists by default.
  function rtcConfigFor(url) {
    const host = new URL(url).hostname;
    return ['127.0.0.1', 'localhost', '[::1]'].includes(host) ? { iceServers: [] } : undefined;
  }

  function showCall(call) {
    state.call = call;
    $('details').hidden = false;
    $('sim-call-id').textContent = call.id;
    if (call.call_id) {
      $('call-id').textContent = call.call_id;
      $('record-id').textContent = call.call_id;
    }
  }

  // waitForRoom polls the sim call every 100 ms until Bridgeline answers it (it carries
  // the room), for at most a minute. It returns null when the call ended first.
  async function waitForRoom(id) {
    for (let i = 0; i < 600; i++) {
      const call = await api('GET', `/sim/calls/${id}`);
      showCall(call);
      if (call.room) return call;
      if (final(call)) return null;
      await sleep(100);
    }
    throw new Error('the line did not answer within a minute');
  }

  // meter follows the line's audio (level-meter.js): level is the RMS of the last 20 ms
  // or so, peak the highest level since the call connected.
  function meter(mediaStreamTrack) {
    window.bridgelineLevelMeter(state.audio, mediaStreamTrack, (l) => {
      state.level = l;
      state.peak = Math.max(state.peak, l);
      $('level').style.width = `${Math.min(100, Math.round(l * 400))}%`;
    }, () => !!state.room);
  }

  function onTrack(track) {
    if (track.kind === 'video') {
      track.attach($('remote-video'));
    } else if (track.kind === 'audio') {
      $('audio-sink').appendChild(track.attach());
      meter(track.mediaStreamTrack);
    }
  }

  // join connects to the room, then captures the microphone (and camera) and publishes
  // them. The assistant greets once it has decoded the caller's audio, so nothing waits
  // in between: one capture for both tracks, both published and playback started side
  // by side. The microphone starts only once the room is connected (a caller's first
  // words are not spoken into a call that is not there yet).
  async function join(call, media) {
    const room = new LK.Room({ adaptiveStream: false, dynacast: false });
    state.room = room;
    room
      .on(LK.RoomEvent.TrackSubscribed, onTrack)
      .on(LK.RoomEvent.TrackUnsubscribed, (track) => track.detach())
      .on(LK.RoomEvent.Disconnected, () => finish('The call ended.'));
    await room.connect(call.room.rtc_url, call.room.participant_token, { rtcConfig: rtcConfigFor(call.room.rtc_url) });
    performance.mark('sim:connected');
    const localTracks = LK.createLocalTracks({ audio: true, video: media === 'video' });
    state.localTracks = localTracks;
    const tracks = await localTracks;
    const mic = tracks.filter((t) => t.kind === 'audio');
    const cam = tracks.filter((t) => t.kind === 'video');
    await Promise.all([
      room.startAudio(),
      ...mic.map((t) => room.localParticipant.publishTrack(t)),
      ...cam.map((t) => room.localParticipant.publishTrack(t)),
    ]);
    if (cam.length > 0) {
      cam[0].attach($('self-view'));
      $('self-view').dataset.live = '1';
    }
    performance.mark('sim:published');
    showCall(await api('POST', `/sim/calls/${call.id}/joined`));
    setState('connected', 'Connected.');
  }

  // watch follows the sim call while it is live, so an end the room does not show (the
  // line rejecting the call, say) still reaches the page.
  async function watch(id) {
    while (state.call && state.call.id === id && !state.ended) {
      await sleep(1000);
      try {
        const call = await api('GET', `/sim/calls/${id}`);
        if (state.call && state.call.id === id) showCall(call);
        if (final(call)) {
          finish(`The call ended (${call.status}${call.reason ? ': ' + call.reason : ''}).`);
          return;
        }
      } catch (e) {
        // The stack may be restarting; keep trying while the call is ours.
      }
    }
  }

  function finish(text, failed) {
    if (state.ended) return;
    state.ended = text;
    const room = state.room;
    state.room = null;
    if (room) room.disconnect();
    // Captured tracks stop with the call, published or not (the line may refuse it).
    if (state.localTracks) state.localTracks.then((ts) => ts.forEach((t) => t.stop()), () => {});
    state.localTracks = null;
    delete $('self-view').dataset.live;
    $('remote-video').srcObject = null;
    $('audio-sink').replaceChildren();
    $('level').style.width = '0';
    $('call').disabled = false;
    $('hangup').disabled = true;
    if (state.call && state.call.call_id) $('record').hidden = false;
    setState(failed ? 'failed' : 'ended', text);
  }

  $('dial').addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!LK) {
      setState('failed', 'The LiveKit client SDK did not load: run `bash scripts/install-browser.sh` and restart the stack.');
      return;
    }
    const media = $('media').value;
    // Created inside the click, so the browser lets it play.
    state.audio = state.audio || new AudioContext();
    Object.assign(state, { call: null, room: null, localTracks: null, level: 0, peak: 0, ended: null });
    $('call').disabled = true;
    $('hangup').disabled = false;
    $('record').hidden = true;
    $('call-id').textContent = '(once answered)';
    setState('ringing', 'Ringing…');
    try {
      performance.mark('sim:click');
      const placed = await api('POST', '/sim/calls', { from: $('from').value, to: $('to').value, media, party: 'browser' });
      performance.mark('sim:placed');
      showCall(placed);
      const call = await waitForRoom(placed.id);
      if (!call) {
        finish(`The line did not take the call (${state.call.status}${state.call.reason ? ': ' + state.call.reason : ''}).`, true);
        return;
      }
      performance.mark('sim:answered');
      setState('joining', 'Answered; joining the room…');
      await join(call, media);
      watch(call.id);
    } catch (err) {
      finish(`Call failed: ${err.message}`, true);
    }
  });

  $('hangup').addEventListener('click', async () => {
    const call = state.call;
    if (!call) return;
    try {
      await api('POST', `/sim/calls/${call.id}/hangup`);
    } finally {
      finish('You hung up.');
    }
  });

  // Closing the tab hangs up too.
  window.addEventListener('pagehide', () => {
    if (state.call && !state.ended) navigator.sendBeacon(`/sim/calls/${state.call.id}/hangup`);
  });

  const q = new URLSearchParams(location.search);
  for (const k of ['from', 'to', 'media']) if (q.get(k)) $(k).value = q.get(k);
})();
